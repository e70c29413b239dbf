#!/usr/bin/env bash
# Parquet pages larger than the reader's page cap (default 1 GiB; floe --max-page-size).
#
# DuckDB writes the shape of parquet-testing's large_string_map.brotli.parquet (MAP(STRING,
# INT32), two rows, one entry each: a key of 'a's and the value 1) with 3 MiB keys, so the
# cap can be set below its page: `floe cat` and `floe scan` refuse the page with an error
# naming its size, the cap and the option, and with the cap raised print what DuckDB
# reads (canonical NDJSON, tests/js/read_parquet.mjs). Pages over 1 GiB themselves are
# tested in tests/unit/test_pq_large_page.c. When the conformance folder holds
# large_string_map.brotli.parquet (or LARGE_STRING_MAP names a file of that shape), it is
# read too: refused by default, and with --max-page-size 2GiB its two keys of 2^30 'a'
# and values 1, as Arrow and DuckDB read them.
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
here=$(cd "$(dirname "$0")" && pwd)
js=$here/../js
conf=${FLOE_CONFORMANCE:-$here/../../../shared/conformance}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export FLOE_CATALOG_URI="sqlite:///$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true

key=$((3 << 20))
node "$js/large_map_file.mjs" "$tmp/m.parquet" "$key" brotli
node "$js/read_parquet.mjs" --reader duckdb "$tmp/m.parquet" > "$tmp/duckdb.ndjson"
[ "$(wc -l < "$tmp/duckdb.ndjson")" -eq 2 ] || fail "DuckDB should read 2 rows"

# cat: refused under a cap below the page, with a message that says what to do
set +e
"$FLOE" cat --max-page-size 1MiB "$tmp/m.parquet" > /dev/null 2> "$tmp/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "cat under the cap: exit $rc, want 1 ($(cat "$tmp/err"))"
grep -q "larger than the 1048576-byte cap" "$tmp/err" || fail "cat: no cap in: $(cat "$tmp/err")"
grep -q -- "--max-page-size" "$tmp/err" || fail "cat: the error does not name the option"
grep -q "arr.key_value.key" "$tmp/err" || fail "cat: the error does not name the column"
# raised (and by default: 1 GiB), it reads what DuckDB reads
"$FLOE" cat --canonical --max-page-size 8MiB "$tmp/m.parquet" > "$tmp/floe.ndjson"
node "$js/compare.mjs" "$tmp/duckdb.ndjson" "$tmp/floe.ndjson" || fail "cat differs from DuckDB"
"$FLOE" cat --canonical "$tmp/m.parquet" > "$tmp/floe-default.ndjson"
cmp -s "$tmp/floe.ndjson" "$tmp/floe-default.ndjson" || fail "cat with the default cap differs"
# usage errors
set +e
"$FLOE" cat --max-page-size 12 "$tmp/m.parquet" > /dev/null 2>&1; [ $? -eq 2 ] ||
    fail "--max-page-size below 1KiB should be a usage error"
"$FLOE" cat --max-page-size lots "$tmp/m.parquet" > /dev/null 2>&1; [ $? -eq 2 ] ||
    fail "--max-page-size without a size should be a usage error"
set -e

# scan: a table whose data file has a page of 768 KiB (floe's writer, PLAIN past its
# dictionary limit), read under a cap of 512 KiB, then raised
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"s","required":false,"type":"string"}]}' > "$tmp/s.json"
"$FLOE" namespace create ns > /dev/null
"$FLOE" table create ns.big --schema "$tmp/s.json" > /dev/null
python3 -c "
import json
for i in range(2):
    print(json.dumps({'id': i, 's': chr(ord('a') + i) * (768 * 1024)}))" > "$tmp/rows.ndjson"
"$FLOE" append ns.big "$tmp/rows.ndjson" > /dev/null
set +e
"$FLOE" scan ns.big --max-page-size 512KiB > /dev/null 2> "$tmp/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "scan under the cap: exit $rc, want 1 ($(cat "$tmp/err"))"
grep -q "larger than the 524288-byte cap" "$tmp/err" || fail "scan: no cap in: $(cat "$tmp/err")"
"$FLOE" scan ns.big --max-page-size 4MiB --format canonical > "$tmp/scan.ndjson"
"$FLOE" scan ns.big --format canonical > "$tmp/scan-default.ndjson"
cmp -s "$tmp/scan.ndjson" "$tmp/scan-default.ndjson" || fail "scan with the default cap differs"
python3 - "$tmp/scan.ndjson" <<'EOF' || fail "scan rows differ from the rows appended"
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: int(r["id"]))
want = [{"id": i, "s": chr(ord("a") + i) * (768 * 1024)} for i in range(2)]
got = [{"id": int(r["id"]), "s": r["s"]} for r in rows]
sys.exit(0 if got == want else 1)
EOF

# the parquet-testing file itself, where present: two keys of 2^30 'a', values 1
big=${LARGE_STRING_MAP:-$conf/parquet-testing/data/large_string_map.brotli.parquet}
if [ -f "$big" ]; then
    set +e
    "$FLOE" cat "$big" > /dev/null 2> "$tmp/err"
    rc=$?
    set -e
    [ $rc -eq 1 ] && grep -q "larger than the 1073741824-byte cap" "$tmp/err" ||
        fail "$big: the default cap should refuse it (exit $rc: $(cat "$tmp/err"))"
    "$FLOE" cat --max-page-size 2GiB "$big" | python3 -c '
import sys
f, rows = sys.stdin.buffer, 0
while True:
    head = f.read(9)
    if not head:
        break
    assert head == b"{\"arr\":{\"", head
    n = 0
    while True:
        chunk = f.peek(1 << 20)[: 1 << 20]
        i = chunk.find(b"\"")
        part = chunk if i < 0 else chunk[:i]
        assert part.count(b"a") == len(part), "a key byte is not a"
        n += len(part)
        f.read(len(part))
        if i >= 0:
            break
    assert n == 1 << 30, n
    assert f.readline() == b"\":1}}\n"
    rows += 1
assert rows == 2, rows
' || fail "$big: not two keys of 2^30 'a' with value 1"
    echo "large_page: $big read with --max-page-size 2GiB"
else
    echo "large_page: $big is not in the conformance folder (its pages are tested by" \
         "test_pq_large_page)"
fi
echo "large_page: ok"
