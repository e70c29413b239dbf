#!/usr/bin/env bash
# dropped_source_spec.sh - files of an older partition spec whose source column has since
# been dropped (floe table partition replace, then floe table schema drop-column):
#   - floe files shows their partition values (the spec is bound to the older schema
#     that still has the column), text and JSON;
#   - floe snapshots cherrypick of an append made under the older spec (staged on a
#     branch) is not a fast-forward and works: the files keep spec 0 and their tuples,
#     and the table scans to every row;
#   - every manifest of spec 0 written afterwards (the cherry-pick's, floe rewrite-manifests
#     --spec-id 0, and floe rewrite's rewrite of the old manifest) records in its Avro
#     header a schema that has the spec's source column (Iceberg spec "Manifests": the
#     header's schema is the one partition-spec was written against), and reading the
#     table warns about no header.
set -euo pipefail
name=dropped_source_spec oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"
hdr=$src/tests/integration/lib/avro_header.py

echo '{"type":"struct","fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"s","required":false,"type":"string"}]}' > "$tmp/s2.json"
printf '{"id":1,"s":"a"}\n{"id":2,"s":"b"}\n{"id":3,"s":"a"}\n' > "$tmp/d.ndjson"
printf '{"id":7,"s":"c"}\n' > "$tmp/d2.ndjson"
"$floe" table create ns.p --schema "$tmp/s2.json" --partition 'id' >/dev/null
"$floe" append ns.p "$tmp/d.ndjson" >/dev/null
"$floe" ref create ns.p staged >/dev/null
"$floe" append ns.p "$tmp/d.ndjson" --branch staged >/dev/null
staged=$("$floe" ref list ns.p --json | python3 -c 'import json,sys; print([r for r in json.load(sys.stdin) if r["name"] == "staged"][0]["snapshot_id"])')
"$floe" table partition ns.p replace 's' >/dev/null
"$floe" append ns.p "$tmp/d2.ndjson" >/dev/null
"$floe" table schema ns.p drop-column id >/dev/null

# partitions of the old spec shown
parts() { "$floe" files ns.p --json | python3 -c 'import json,sys; print(" ".join(sorted("%d:%s" % (f["spec_id"], f["partition"]) for f in json.load(sys.stdin))))'; }
[ "$(parts)" = "0:id=1 0:id=2 0:id=3 1:s=c" ] || fail "floe files partitions: $(parts)"
"$floe" files ns.p | awk -F'\t' '$2 == "-" { bad = 1 } END { exit bad }' || fail "floe files prints - for a partition: $("$floe" files ns.p)"

# cherry-pick the staged append of spec 0 (main moved on: not a fast-forward)
"$floe" snapshots cherrypick ns.p "$staged" --json > "$tmp/pick.json" 2> "$tmp/pick.err" ||
  fail "cherrypick of an append of an older spec: $(cat "$tmp/pick.err")"
grep -q '"fast_forward":false' "$tmp/pick.json" && grep -q '"added_files":3,"added_records":3' "$tmp/pick.json" ||
  fail "cherrypick: $(cat "$tmp/pick.json")"
[ "$(parts)" = "0:id=1 0:id=1 0:id=2 0:id=2 0:id=3 0:id=3 1:s=c" ] || fail "files after the cherry-pick: $(parts)"
[ "$("$floe" scan ns.p --format ndjson | sort | uniq -c | tr -s ' ' | tr '\n' ';')" = ' 4 {"s":"a"}; 2 {"s":"b"}; 1 {"s":"c"};' ] ||
  fail "rows after the cherry-pick: $("$floe" scan ns.p --format ndjson | sort | uniq -c)"
rc=0; "$floe" snapshots cherrypick ns.p "$staged" 2>/dev/null >/dev/null || rc=$?
[ $rc = 1 ] || fail "picking the same snapshot twice exits $rc"

# every manifest of spec 0 names a schema with column 1 (id) in its header
check_headers() {
  python3 "$hdr" "$tmp"/wh/ns/p/metadata/*-m*.avro | python3 -c '
import json, sys
bad = []
n = 0
for line in sys.stdin:
    h = json.loads(line)
    m = h["meta"]
    if m.get("partition-spec-id") != "0":
        continue
    n += 1
    ids = [f["id"] for f in json.loads(m["schema"])["fields"]]
    if 1 not in ids:
        bad.append("%s: schema-id %s without column 1" % (h["file"].rsplit("/", 1)[1], m.get("schema-id")))
if bad or n < int(sys.argv[1]):
    print("; ".join(bad) or "only %d manifests of spec 0" % n)
    sys.exit(1)
' "$1"
}
check_headers 3 || fail "after the cherry-pick: $(check_headers 3)"
"$floe" rewrite-manifests ns.p --spec-id 0 > "$tmp/rm.out" 2>&1 || fail "rewrite-manifests --spec-id 0: $(cat "$tmp/rm.out")"
check_headers 4 || fail "after rewrite-manifests: $(check_headers 4)"
"$floe" rewrite ns.p --where "s = 'c'" --option rewrite-all=true > "$tmp/rw.out" 2>&1 || fail "rewrite: $(cat "$tmp/rw.out")"
"$floe" rewrite ns.p --option rewrite-all=true > "$tmp/rw.out" 2>&1 || fail "rewrite: $(cat "$tmp/rw.out")"
check_headers 5 || fail "after rewrite: $(check_headers 5)"
"$floe" files ns.p --snapshot "$("$floe" snapshots ns.p --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-2]["snapshot_id"])')" > /dev/null 2> "$tmp/files.err"
"$floe" scan ns.p --format ndjson > /dev/null 2>> "$tmp/files.err"
! grep -qi 'warn' "$tmp/files.err" || fail "reading the table warns: $(cat "$tmp/files.err")"
[ "$("$floe" scan ns.p --format ndjson | wc -l)" = 7 ] || fail "rows after the rewrite"

[ $fails = 0 ] || exit 1
echo "$name: ok"
