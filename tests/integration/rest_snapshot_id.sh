#!/usr/bin/env bash
# rest_snapshot_id.sh - snapshot ids are positive (adversary finding N5 on issue 21): the
# server took an add-snapshot with snapshot-id -1 and main set to it, and wrote
# "current-snapshot-id": -1 with a main ref - Iceberg Java refuses to load such a table,
# PyIceberg reads it as empty, floe read its rows.
#  1. add-snapshot with snapshot-id -1, 0 or -5 (with or without a set-snapshot-ref to
#     it): 400 BadRequestException naming the id, nothing committed; a set-snapshot-ref
#     of a branch or tag to -1 or 0: 400 naming it; through transactions/commit too;
#  2. a table whose metadata (another writer's) has a snapshot -1 on main: floe scan and
#     the server's loadTable give an error naming the field, not rows.
set -euo pipefail
name=rest_snapshot_id
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "$name: sqlite3 missing, skipped"; exit 77; }

shop_table z1 2
serve_table z1
q() { loaded "$tmp/z1.json" "$1"; }
cur=$(q "m['current-snapshot-id']")
meta=$(q "d['metadata-location']")

# snap ID: an add-snapshot update of snapshot ID on the current one, with a copy of its
# manifest list (a list is a snapshot's own: rest_snapshot_list_path.sh)
list=$(q "m['snapshots'][-1]['manifest-list']")
cp "${list#file://}" "$tmp/wh/shop/z1/metadata/snap-copy.avro"
snap() {
  q "json.dumps({'action': 'add-snapshot', 'snapshot': {'snapshot-id': $1, 'parent-snapshot-id': m['current-snapshot-id'], 'sequence-number': m['last-sequence-number'] + 1, 'timestamp-ms': m['last-updated-ms'] + 1, 'manifest-list': m['location'] + '/metadata/snap-copy.avro', 'summary': {'operation': 'append'}}})"
}
ref() { printf '{"action":"set-snapshot-ref","ref-name":"%s","type":"%s","snapshot-id":%s}' "$1" "$2" "$3"; }
commit() { printf '{"requirements":[],"updates":[%s]}' "$1"; }

# 1. refused
for id in -1 0 -5; do
  expect_soft "add-snapshot $id with main on it" 400 "snapshot id $id is not positive" POST $tbl \
    "$(commit "$(snap $id),$(ref main branch $id)")"
  grep -q BadRequestException "$tmp/body" || soft "add-snapshot $id: not a BadRequestException: $(head -c 300 "$tmp/body")"
done
expect_soft "add-snapshot -1 alone" 400 "snapshot id -1 is not positive" POST $tbl "$(commit "$(snap -1)")"
expect_soft "set-snapshot-ref main -1" 400 "snapshot id -1 is not positive" POST $tbl "$(commit "$(ref main branch -1)")"
expect_soft "set-snapshot-ref tag 0" 400 "snapshot id 0 is not positive" POST $tbl "$(commit "$(ref t0 tag 0)")"
expect_soft "transactions/commit: add-snapshot -1" 400 "snapshot id -1 is not positive" POST /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"z1\"},\"requirements\":[],\"updates\":[$(snap -1),$(ref b1 branch -1)]}]}"
[ "$(req $T GET $tbl)" = 200 ] || fail "load z1"
[ "$(jget '["metadata-location"]' < "$tmp/body")" = "$meta" ] || soft "a refused commit changed the table"
[ "$(jget '["metadata"]["current-snapshot-id"]' < "$tmp/body")" = "$cur" ] || soft "current-snapshot-id moved"
# a positive id is taken
expect_soft "add-snapshot 77 with main on it" 200 '"current-snapshot-id":77' POST $tbl \
  "$(commit "$(snap 77),$(ref main branch 77)")"

# 2. another writer's metadata with snapshot -1 on main
[ "$(req $T GET $tbl)" = 200 ] || fail "load z1"
cp "$tmp/body" "$tmp/z1.json"
cur_file=$(q "d['metadata-location']")
cur_file=${cur_file#file://}
python3 - "$cur_file" "${cur_file%/*}/99999-minus1.metadata.json" <<'PY'
import json, sys
cur, new = sys.argv[1:]
m = json.load(open(cur))
s = dict(m["snapshots"][-1])
s.update({"snapshot-id": -1, "parent-snapshot-id": m["current-snapshot-id"],
          "sequence-number": m["last-sequence-number"] + 1, "timestamp-ms": m["last-updated-ms"] + 1})
m["snapshots"].append(s)
m["last-sequence-number"] += 1
m["current-snapshot-id"] = -1
m["refs"]["main"] = {"snapshot-id": -1, "type": "branch"}
m["metadata-log"].append({"timestamp-ms": m["last-updated-ms"], "metadata-file": "file://" + cur})
json.dump(m, open(new, "w"))
PY
sqlite3 "$tmp/catalog.db" "UPDATE iceberg_tables SET metadata_location = 'file://${cur_file%/*}/99999-minus1.metadata.json',
  previous_metadata_location = metadata_location WHERE table_name = 'z1'"
rc=0
"$floe" scan shop.z1 > "$tmp/scan.out" 2> "$tmp/scan.err" || rc=$?
[ $rc != 0 ] || soft "floe scan of a table with snapshot -1 on main: exit 0, $(wc -l < "$tmp/scan.out") rows"
grep -q 'snapshot-id" is -1' "$tmp/scan.err" || soft "floe scan: the error does not name snapshot-id -1: $(head -c 300 "$tmp/scan.err")"
code=$(req $T GET $tbl)
[ "$code" != 200 ] || soft "loadTable of a table with snapshot -1 on main: 200"
grep -q 'snapshot-id.* is -1' "$tmp/body" || soft "loadTable: the error does not name snapshot-id -1: $(head -c 300 "$tmp/body")"
server_alive
openapi_check
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
