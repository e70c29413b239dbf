#!/usr/bin/env bash
# rewrite_dropped_source.sh - `floe rewrite` of a file written under an older partition
# spec whose source column has since been dropped (allowed: not in the current spec).
# The table's metadata no longer binds that spec to the current schema, so the rewrite
# writes the old manifest (its entry marked deleted) with the spec the manifest's own
# header binds; that spec must live until the manifest is written (under ASan a
# use-after-free exits 99). Asserted: the rewrite succeeds, the file is rewritten into
# the current spec (identity(s)), and the table scans to the same rows as before.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "rewrite_dropped_source: FAIL: $*" >&2; exit 1; }
cd "$tmp"
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
echo '{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"s","required":false,"type":"string"}]}' > s.json
printf '{"id":1,"s":"a"}\n{"id":2,"s":"b"}\n{"id":3,"s":"a"}\n' > d.ndjson
"$floe" namespace create ns > /dev/null
"$floe" table create ns.u --schema s.json --partition 'bucket(2, id)' > /dev/null
"$floe" append ns.u d.ndjson > /dev/null
"$floe" table partition ns.u replace 's' > /dev/null
"$floe" table schema ns.u drop-column id > /dev/null
"$floe" scan ns.u --format ndjson | sort > before.ndjson
[ "$(wc -l < before.ndjson)" -eq 3 ] || fail "scan before: $(cat before.ndjson)"
rc=0
"$floe" rewrite ns.u --option rewrite-all=true > rewrite.out 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "rewrite exit $rc: $(cat rewrite.out)"
grep -q "rewrote 2 data files" rewrite.out || fail "rewrite: $(cat rewrite.out)"
"$floe" scan ns.u --format ndjson | sort > after.ndjson
cmp -s before.ndjson after.ndjson || fail "rows differ: $(cat before.ndjson) vs $(cat after.ndjson)"
"$floe" files ns.u 2> files.err | cut -f2 | sort > parts
[ "$(tr '\n' ' ' < parts)" = "s=a s=b " ] || fail "files after the rewrite: $(cat parts)"

# output-spec-id naming the old spec: its files are rewritten within their partitions
# (grouped by their id values, which the rows no longer carry), keep spec 0 and their
# values, and their new manifest's header records a schema with id; the files of spec 1
# cannot be placed in spec 0's partitions and stay as they are.
printf '{"id":1,"s":"a"}\n{"id":2,"s":"b"}\n{"id":1,"s":"c"}\n' > o.ndjson
"$floe" table create ns.o --schema s.json --partition 'id' > /dev/null
"$floe" append ns.o o.ndjson > /dev/null
"$floe" append ns.o o.ndjson > /dev/null
"$floe" table partition ns.o replace 's' > /dev/null
"$floe" append ns.o o.ndjson > /dev/null
"$floe" table schema ns.o drop-column id > /dev/null
parts() { "$floe" files ns.o --json | python3 -c 'import json,sys; print(" ".join(sorted("%d:%s:%d" % (f["spec_id"], f["partition"], f["records"]) for f in json.load(sys.stdin))))'; }
[ "$(parts)" = "0:id=1:2 0:id=1:2 0:id=2:1 0:id=2:1 1:s=a:1 1:s=b:1 1:s=c:1" ] || fail "files before: $(parts)"
"$floe" scan ns.o --format ndjson | sort > o.before
rc=0
"$floe" rewrite ns.o --option rewrite-all=true --option output-spec-id=0 --dry-run --json > o.plan 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "dry run with output-spec-id=0: exit $rc: $(cat o.plan)"
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
got = sorted((g["spec_id"], g["partition"], g["input_files"]) for g in p["groups"])
assert got == [(0, "id=1", 2), (0, "id=2", 2)], got
assert p["files_left_out"] == 3, p["files_left_out"]' o.plan || fail "plan: $(cat o.plan)"
"$floe" rewrite ns.o --option rewrite-all=true --option output-spec-id=0 > o.out 2>&1 || fail "rewrite with output-spec-id=0: $(cat o.out)"
grep -q "rewrote 4 data files" o.out && grep -q "3 data file(s) of other partition specs left as they are" o.out ||
  fail "rewrite output: $(cat o.out)"
[ "$(parts)" = "0:id=1:4 0:id=2:2 1:s=a:1 1:s=b:1 1:s=c:1" ] || fail "files after the rewrite into spec 0: $(parts)"
"$floe" scan ns.o --format ndjson | sort > o.after
cmp -s o.before o.after || fail "rows differ: $(cat o.before) vs $(cat o.after)"
"$floe" files ns.o --json | python3 -c '
import json, sys
for f in json.load(sys.stdin):
    if f["spec_id"] == 0:
        assert "/data/id=" in f["path"], f["path"]' || fail "the rewritten files are not in their id= folders: $("$floe" files ns.o)"
python3 "$src/tests/integration/lib/avro_header.py" "$tmp"/wh/ns/o/metadata/*-m*.avro | python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    m = json.loads(line)["meta"]
    if m.get("partition-spec-id") == "0":
        n += 1
        ids = [f["id"] for f in json.loads(m["schema"])["fields"]]
        assert 1 in ids, (m.get("schema-id"), ids)
assert n >= 3, n' || fail "a manifest of spec 0 records a schema without id"
echo "rewrite_dropped_source: ok"
