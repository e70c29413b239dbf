#!/usr/bin/env bash
# rest_staged_files.sh - adversary finding N2 on issue 21 (adv21e, data loss): a staged
# create's commit that added a snapshot was not held to "set-location only into a missing,
# empty or own folder", so it could make the table in the folder of a table dropped
# without purge (its files kept, to be registered again), and orphan removal of the new
# table then deleted the dropped table's data, manifests and metadata files. `floe
# catalog serve` now lets such a folder hold only the files the commit's snapshots
# reference (their manifest lists, the manifests those name, the data files those hold);
# anything else is a 400 naming it (another table's metadata file first), nothing made.
#  1. a dropped table's folder, with the client's manifest list written into it: 400
#     naming the dropped table's metadata file; the dropped table registers again, whole;
#  2. a folder holding a client's complete snapshot (data files, manifest, manifest
#     list) and one stray file: 400 naming it; without the stray file: 200, the table
#     reads its rows and orphan removal deletes nothing.
# Orphan removal's own guard (a metadata file of another table-uuid in the table's
# metadata folder) is tested by maint_orphans_foreign_md.sh.
name=rest_staged_files
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

wh=$tmp/wh
S=$id_schema
printf '{"id":1}\n{"id":2}\n' > "$tmp/e.ndjson"
"$floe" namespace create shop >/dev/null
serve_checked ""
T=open
tree() { (cd "$1" && find . -type f | sort | xargs -r sha256sum); }

# commit_body LOCATION MANIFEST-LIST SNAPSHOT-ID: a staged create's commit (the shape
# Iceberg Java sends for CREATE TABLE AS SELECT) moving the table to LOCATION and adding a
# snapshot whose manifest list is MANIFEST-LIST
commit_body() {
  python3 -c '
import json, sys
s = json.loads(sys.argv[1]); loc, ml, sid = sys.argv[2], sys.argv[3], int(sys.argv[4])
u = [{"action": "upgrade-format-version", "format-version": 2},
     {"action": "add-schema", "schema": s, "last-column-id": 1},
     {"action": "set-current-schema", "schema-id": -1},
     {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
     {"action": "set-default-spec", "spec-id": -1},
     {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
     {"action": "set-default-sort-order", "sort-order-id": -1},
     {"action": "set-location", "location": loc},
     {"action": "add-snapshot", "snapshot": {"snapshot-id": sid, "sequence-number": 1,
      "timestamp-ms": 1764960000000, "manifest-list": ml,
      "summary": {"operation": "append"}, "schema-id": 0}},
     {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": sid}]
print(json.dumps({"requirements": [{"type": "assert-create"}], "updates": u}))' "$S" "$@"
}

# 1. a dropped table's kept files, with the client's manifest list (a copy of ev's)
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"ev\",\"schema\":$S}"
"$floe" append shop.ev "$tmp/e.ndjson" >/dev/null
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"dr\",\"schema\":$S}"
"$floe" append shop.dr "$tmp/e.ndjson" >/dev/null
expect 200 $T GET /v1/namespaces/shop/tables/dr
jget '["metadata-location"]' < "$tmp/body" > "$tmp/dr.ml"
expect 204 $T DELETE "/v1/namespaces/shop/tables/dr?purgeRequested=false"
cp "$(ls "$wh"/shop/ev/metadata/snap-*.avro | head -1)" "$wh/shop/dr/metadata/snap-client.avro"
tree "$wh/shop/dr" > "$tmp/dr.before"
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"ctas\",\"stage-create\":true,\"location\":\"file://$wh/shop/ctas0\",\"schema\":$S}"
expect_soft "a staged create's commit adding a snapshot into a dropped table's folder" 400 ".metadata.json" \
  POST /v1/namespaces/shop/tables/ctas \
  "$(commit_body "file://$wh/shop/dr" "file://$wh/shop/dr/metadata/snap-client.avro" 1234567890123)"
if [ "$(req $T GET /v1/namespaces/shop/tables/ctas)" = 200 ]; then
  soft "the refused commit made shop.ctas"
  "$floe" orphans shop.ctas --older-than 0s --force >/dev/null 2>&1 || true
fi
tree "$wh/shop/dr" > "$tmp/dr.after"
cmp -s "$tmp/dr.before" "$tmp/dr.after" ||
  soft "shop.dr's kept files changed: $(diff "$tmp/dr.before" "$tmp/dr.after" | head -3)"
rm -f "$wh/shop/dr/metadata/snap-client.avro"
req $T DELETE "/v1/namespaces/shop/tables/ctas?purgeRequested=false" >/dev/null
expect_soft "shop.dr registered again" 200 "metadata" \
  POST /v1/namespaces/shop/register "{\"name\":\"dr\",\"metadata-location\":\"$(cat "$tmp/dr.ml")\"}"
[ "$("$floe" scan shop.dr 2>&1 | wc -l)" = 2 ] || soft "shop.dr registered again does not read"

# 2. a client's own snapshot: a table of a second catalog writes data files, a manifest and
# a manifest list into a folder; its metadata files are taken away (a client writes none
# before the commit)
loc=$wh/shop/ctas2
FLOE_CATALOG_URI=$tmp/other.db "$floe" namespace create shop >/dev/null
echo "$S" > "$tmp/s.json"
FLOE_CATALOG_URI=$tmp/other.db "$floe" table create shop.w --schema "$tmp/s.json" --location "$loc" >/dev/null
FLOE_CATALOG_URI=$tmp/other.db "$floe" append shop.w "$tmp/e.ndjson" >/dev/null
ml=$(ls "$loc"/metadata/snap-*.avro)
sid=$(basename "$ml" | cut -d- -f2)
rm -f "$loc"/metadata/*.metadata.json "$loc"/metadata/version-hint.text
echo "notes" > "$loc/stray.txt"
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"ctas2\",\"stage-create\":true,\"location\":\"file://$wh/shop/ctas2s\",\"schema\":$S}"
expect_soft "a staged create's commit into a folder with a stray file" 400 "stray.txt" \
  POST /v1/namespaces/shop/tables/ctas2 "$(commit_body "file://$loc" "file://$ml" "$sid")"
[ "$(req $T GET /v1/namespaces/shop/tables/ctas2)" = 404 ] || soft "the refused commit made shop.ctas2"
req $T DELETE "/v1/namespaces/shop/tables/ctas2?purgeRequested=false" >/dev/null
rm -f "$loc/stray.txt"
tree "$loc" > "$tmp/w.before"
expect 200 $T POST /v1/namespaces/shop/tables/ctas2 "$(commit_body "file://$loc" "file://$ml" "$sid")"
[ "$("$floe" scan shop.ctas2 | wc -l)" = 2 ] || fail "shop.ctas2 does not read its snapshot"
"$floe" orphans shop.ctas2 --older-than 0s --force > "$tmp/orphans.out" 2>&1 ||
  fail "orphans of shop.ctas2: $(cat "$tmp/orphans.out")"
(cd "$loc" && find . -type f ! -name '*.metadata.json' | sort | xargs -r sha256sum) > "$tmp/w.after"
cmp -s "$tmp/w.before" "$tmp/w.after" || fail "orphan removal of shop.ctas2 deleted its snapshot's files"

server_alive
openapi_check
[ $fails = 0 ] || fail "$fails cases failed"
echo "$name: ok"
