#!/usr/bin/env bash
# rest_commit_paths.sh - `floe catalog serve` refuses a commit that names files outside
# the table's own folders (adversary finding on issue 21, data loss): a client granted
# only shop.atk committed an add-snapshot whose manifest list was shop.victim's (or a
# statistics file that was victim's data file, or set write.data.path to victim's folder),
# and a later expiry of shop.atk deleted shop.victim's files.
#  1. add-snapshot whose manifest list lies outside the table's location (another
#     table's list, the same through "..", a v1 inline manifest), set-statistics and
#     set-partition-statistics naming a file outside it, set-properties of
#     write.data.path / write.metadata.path / write.object-storage.path outside it (and
#     such properties in a create, a staged create, a registered metadata file, or a
#     registered snapshot's manifest list or statistics file elsewhere): 400
#     BadRequestException naming the
#     path or property, nothing committed; through a staged create's commit and
#     transactions/commit too;
#  2. what stays allowed: a write.data.path inside the location, `floe append` through
#     the server (its manifest list is in the table's metadata folder, its data files in
#     that write.data.path);
#  3. floe expire (through the server, and on the SQL catalog) and orphan removal of
#     shop.atk afterwards leave every file of shop.victim in place, and its rows scan.
set -euo pipefail
name=rest_commit_paths
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

tokens='[token ops]
secret = secret-ops-0001
grants = *
[token atk]
secret = secret-atk-0001
grants = shop.atk'
echo '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}' > "$tmp/s.json"
"$floe" namespace create shop >/dev/null
for t in victim atk; do
  "$floe" table create shop.$t --schema "$tmp/s.json" >/dev/null
  for k in 1 2; do
    seq $((k * 10 - 9)) $((k * 10)) | sed 's/.*/{"id":&}/' > "$tmp/in.ndjson"
    "$floe" append shop.$t "$tmp/in.ndjson" >/dev/null
  done
done
(cd "$tmp/wh/shop/victim" && find . -type f | sort | xargs sha256sum) > "$tmp/victim.before"
serve_checked "$tokens"
OPS=secret-ops-0001 ATK=secret-atk-0001

[ "$(req $OPS GET /v1/namespaces/shop/tables/victim)" = 200 ] || fail "load victim"
vlist=$(jget '["metadata"]["snapshots"][-1]["manifest-list"]' < "$tmp/body")
vdata=file://$(find "$tmp/wh/shop/victim/data" -name '*.parquet' | head -1)
[ "$(req $ATK GET /v1/namespaces/shop/tables/atk)" = 200 ] || fail "load atk"
cp "$tmp/body" "$tmp/atk.json"
atk_loc=$(jget '["metadata"]["location"]' < "$tmp/atk.json")
atk_snap=$(jget '["metadata"]["current-snapshot-id"]' < "$tmp/atk.json")
atk_meta=$(jget '["metadata-location"]' < "$tmp/atk.json")

# snapshot LIST: an add-snapshot of a new snapshot on atk's current one with that list
snapshot() {
  python3 -c '
import json, sys
m = json.load(open(sys.argv[2]))["metadata"]
s = {"snapshot-id": 777000111, "parent-snapshot-id": m["current-snapshot-id"],
     "sequence-number": m["last-sequence-number"] + 1, "timestamp-ms": m["last-updated-ms"] + 1,
     "manifest-list": sys.argv[1], "summary": {"operation": "append"}, "schema-id": 0}
print(json.dumps([{"action": "add-snapshot", "snapshot": s},
                  {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                   "snapshot-id": 777000111}]))' "$1" "$tmp/atk.json"
}
stats() { # stats KIND PATH
  local key=statistics extra=',"file-size-in-bytes":10,"file-footer-size-in-bytes":4,"blob-metadata":[]'
  [ "$1" = set-partition-statistics ] && key=partition-statistics extra=',"file-size-in-bytes":10'
  echo "[{\"action\":\"$1\",\"snapshot-id\":$atk_snap,\"$key\":{\"snapshot-id\":$atk_snap,\"statistics-path\":\"$2\"$extra}}]"
}
refused() { # refused WHAT NEEDLE STATUS-AND-BODY...
  local what=$1 needle=$2 code=$3
  [ "$code" = 400 ] || fail "$what: HTTP $code, expected 400: $(head -c 300 "$tmp/body")"
  grep -q BadRequestException "$tmp/body" || fail "$what: not a BadRequestException: $(cat "$tmp/body")"
  grep -qF -- "$needle" "$tmp/body" || fail "$what: the answer does not name $needle: $(cat "$tmp/body")"
}
commit_atk() { req $ATK POST /v1/namespaces/shop/tables/atk "{\"requirements\":[],\"updates\":$1}"; }

# 1. refusals
refused "add-snapshot with victim's manifest list" "$vlist" "$(commit_atk "$(snapshot "$vlist")")"
dotted=$atk_loc/../victim/metadata/${vlist##*/}
refused "add-snapshot through '..'" "$dotted" "$(commit_atk "$(snapshot "$dotted")")"
refused "add-snapshot with /etc/passwd" /etc/passwd "$(commit_atk "$(snapshot /etc/passwd)")"
v1=$(snapshot "$atk_loc/metadata/x.avro" | python3 -c '
import json, sys
u = json.load(sys.stdin); s = u[0]["snapshot"]; del s["manifest-list"]; s["manifests"] = [sys.argv[1]]
print(json.dumps(u))' "$vlist")
refused "add-snapshot with an inline manifest of victim's" "$vlist" "$(commit_atk "$v1")"
refused "set-statistics on victim's data file" "$vdata" "$(commit_atk "$(stats set-statistics "$vdata")")"
refused "set-partition-statistics on victim's data file" "$vdata" \
  "$(commit_atk "$(stats set-partition-statistics "$vdata")")"
for prop in write.data.path write.metadata.path write.object-storage.path; do
  for dir in "file://$tmp/wh/shop/victim/data" "$tmp/elsewhere" "$atk_loc/../victim"; do
    refused "set-properties $prop=$dir" "$prop" \
      "$(commit_atk "[{\"action\":\"set-properties\",\"updates\":{\"$prop\":\"$dir\"}}]")"
  done
done
S=$(cat "$tmp/s.json")
refused "create with write.data.path elsewhere" write.data.path "$(req $OPS POST /v1/namespaces/shop/tables \
  "{\"name\":\"w\",\"schema\":$S,\"properties\":{\"write.data.path\":\"file://$tmp/wh/shop/victim/data\"}}")"
refused "staged create with write.metadata.path elsewhere" write.metadata.path "$(req $OPS POST /v1/namespaces/shop/tables \
  "{\"name\":\"w\",\"schema\":$S,\"stage-create\":true,\"properties\":{\"write.metadata.path\":\"$tmp/x\"}}")"
# register: metadata inside the namespace's folder whose write path or manifest list lies elsewhere
mkdir -p "$tmp/wh/shop/reg/metadata"
python3 -c '
import json, sys
m = json.load(open(sys.argv[1])); m["location"] = sys.argv[2]
m["properties"]["write.data.path"] = sys.argv[3]
json.dump(m, open(sys.argv[4], "w"))
m["properties"].pop("write.data.path"); m["location"] = sys.argv[2]
json.dump(m, open(sys.argv[5], "w"))' "${atk_meta#file://}" "file://$tmp/wh/shop/reg" "file://$tmp/wh/shop/victim/data" \
  "$tmp/wh/shop/reg/metadata/00001-a.metadata.json" "$tmp/wh/shop/reg/metadata/00002-b.metadata.json"
refused "register with write.data.path elsewhere" write.data.path "$(req $OPS POST /v1/namespaces/shop/register \
  "{\"name\":\"reg\",\"metadata-location\":\"file://$tmp/wh/shop/reg/metadata/00001-a.metadata.json\"}")"
refused "register of atk's snapshots elsewhere" "manifest list" "$(req $OPS POST /v1/namespaces/shop/register \
  "{\"name\":\"reg\",\"metadata-location\":\"file://$tmp/wh/shop/reg/metadata/00002-b.metadata.json\"}")"
# register: metadata without snapshots whose (partition) statistics file is victim's data file
python3 -c '
import json, sys
m = json.load(open(sys.argv[1])); sid = m["current-snapshot-id"]
m.update({"location": sys.argv[2], "snapshots": [], "snapshot-log": [], "refs": {},
          "current-snapshot-id": -1, "metadata-log": []})
st = {"snapshot-id": sid, "statistics-path": sys.argv[3], "file-size-in-bytes": 10}
json.dump(dict(m, **{"partition-statistics": [st]}), open(sys.argv[5], "w"))
st.update({"file-footer-size-in-bytes": 4, "blob-metadata": []})
json.dump(dict(m, statistics=[st]), open(sys.argv[4], "w"))' "${atk_meta#file://}" "file://$tmp/wh/shop/reg" "$vdata" \
  "$tmp/wh/shop/reg/metadata/00003-c.metadata.json" "$tmp/wh/shop/reg/metadata/00004-d.metadata.json"
refused "register with victim's data file as statistics file" "$vdata" "$(req $OPS POST /v1/namespaces/shop/register \
  "{\"name\":\"reg\",\"metadata-location\":\"file://$tmp/wh/shop/reg/metadata/00003-c.metadata.json\"}")"
refused "register with victim's data file as partition statistics file" "$vdata" "$(req $OPS POST /v1/namespaces/shop/register \
  "{\"name\":\"reg\",\"metadata-location\":\"file://$tmp/wh/shop/reg/metadata/00004-d.metadata.json\"}")"
[ "$(req $OPS GET /v1/namespaces/shop/tables/w)" = 404 ] || fail "a refused create made shop.w"
[ "$(req $OPS GET /v1/namespaces/shop/tables/reg)" = 404 ] || fail "a refused register made shop.reg"
refused "a transaction's add-snapshot" "$vlist" "$(req $OPS POST /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"atk\"},\"requirements\":[],\"updates\":$(snapshot "$vlist")}]}")"
SPEC='{"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":-1},{"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":-1}'
staged=$(python3 -c '
import json, sys
u = [{"action": "add-schema", "schema": json.load(open(sys.argv[1]))}, {"action": "set-current-schema", "schema-id": -1}]
u += json.loads("[" + sys.argv[2] + "]")
s = {"snapshot-id": 5, "sequence-number": 1, "timestamp-ms": 1, "manifest-list": sys.argv[3],
     "summary": {"operation": "append"}, "schema-id": 0}
u += [{"action": "add-snapshot", "snapshot": s}]
print(json.dumps({"requirements": [{"type": "assert-create"}], "updates": u}))' "$tmp/s.json" "$SPEC" "$vlist")
refused "a staged create's add-snapshot" "$vlist" "$(req $OPS POST /v1/namespaces/shop/tables/st "$staged")"
[ "$(req $OPS GET /v1/namespaces/shop/tables/st)" = 404 ] || fail "the refused staged create made shop.st"
[ "$(req $ATK GET /v1/namespaces/shop/tables/atk)" = 200 ] || fail "load atk again"
[ "$(jget '["metadata-location"]' < "$tmp/body")" = "$atk_meta" ] || fail "a refused commit changed shop.atk"

# 2. what stays allowed
code=$(commit_atk "[{\"action\":\"set-properties\",\"updates\":{\"write.data.path\":\"$atk_loc/data2\"}}]")
[ "$code" = 200 ] || fail "write.data.path inside the location: $code $(cat "$tmp/body")"
seq 100 109 | sed 's/.*/{"id":&}/' > "$tmp/in.ndjson"
FLOE_CATALOG_URI=$base FLOE_CATALOG_TOKEN=$ATK FLOE_STATE_DB=$tmp/state.db \
  "$floe" append shop.atk "$tmp/in.ndjson" >/dev/null 2>"$tmp/append.err" ||
  fail "floe append through the server: $(cat "$tmp/append.err")"
ls "$tmp/wh/shop/atk/data2/"*.parquet >/dev/null 2>&1 || fail "the append did not write to write.data.path"

# 3. maintenance of shop.atk leaves shop.victim whole
FLOE_CATALOG_URI=$base FLOE_CATALOG_TOKEN=$ATK FLOE_STATE_DB=$tmp/state.db \
  "$floe" expire shop.atk --older-than 0s --retain-last 1 >/dev/null 2>"$tmp/expire.err" ||
  fail "floe expire through the server: $(cat "$tmp/expire.err")"
"$floe" expire shop.atk --older-than 0s --retain-last 1 >/dev/null
"$floe" orphans shop.atk --older-than 0s --force >/dev/null
(cd "$tmp/wh/shop/victim" && find . -type f | sort | xargs sha256sum) > "$tmp/victim.after"
cmp -s "$tmp/victim.before" "$tmp/victim.after" ||
  fail "shop.victim's files changed: $(diff "$tmp/victim.before" "$tmp/victim.after" | head -5)"
[ "$("$floe" scan shop.victim --format canonical | wc -l)" = 20 ] || fail "shop.victim's rows"
[ "$("$floe" scan shop.atk --format canonical | wc -l)" = 30 ] || fail "shop.atk's rows"
server_alive
openapi_check
echo "$name: ok"
