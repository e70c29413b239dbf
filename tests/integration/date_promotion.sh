#!/usr/bin/env bash
# date_promotion.sh - format v3's type promotion date -> timestamp / timestamp_ns
# (format/spec.md "Schema Evolution").
#
#  1. Refused on a v2 table (a v3 promotion), and for a column feeding a bucket or
#     identity partition field (a date hashes and prints otherwise than its timestamp).
#  2. A v3 table partitioned by day(d): dates appended, d widened to timestamp_ns and e to
#     timestamp; the old files read as midnight of their day (9 and 6 fraction digits),
#     new rows go in with their time; --where on the promoted columns selects exactly and
#     prunes by the old files' 4-byte (date) bounds; floe delete and floe rewrite keep the
#     values (the rewrite converted the days: it copied them as microseconds before), and
#     DuckDB reads the rewritten files to the same nanoseconds.
#  3. A date outside the nanosecond range (2300-01-01) read as timestamp_ns is a runtime
#     failure naming the file and the column, in floe scan and floe rewrite alike.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "date_promotion: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "date_promotion: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true

cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"d","required":false,"type":"date"},{"id":3,"name":"e","required":false,"type":"date"}]}
JSON
cat > "$tmp/a.ndjson" <<'JSON'
{"id":1,"d":"2026-10-06","e":"2026-10-06"}
{"id":2,"d":"1969-12-31","e":"1900-01-01"}
{"id":3,"d":"2200-01-01","e":"2200-01-01"}
{"id":4}
JSON
"$floe" namespace create ns > /dev/null
refused() { # refused TABLE PATH TYPE PATTERN
  if "$floe" table schema "$1" widen "$2" "$3" > /dev/null 2> "$tmp/err"; then
    fail "$1: widen $2 $3 taken"
  fi
  grep -q "$4" "$tmp/err" || fail "$1: widen $2 $3: $(cat "$tmp/err")"
}

# ---- 1. refusals -----------------------------------------------------------------------
"$floe" table create ns.v2 --schema "$tmp/schema.json" > /dev/null
refused ns.v2 d timestamp 'date to timestamp is a format v3 promotion (this table is v2'
"$floe" table create ns.b --schema "$tmp/schema.json" --property format-version=3 \
  --partition 'bucket(4, d), e' > /dev/null
refused ns.b d timestamp_ns 'source of partition field d_bucket of spec 0 (bucket), which gives other values'
refused ns.b e timestamp 'source of partition field e of spec 0 (identity), which gives other values'
refused ns.b d timestamptz 'is not a promotion the spec allows'
echo "date_promotion: refusals ok"

# ---- 2. a promoted table ---------------------------------------------------------------
"$floe" table create ns.t --schema "$tmp/schema.json" --property format-version=3 \
  --property write.metadata.metrics.default=full --partition 'day(d)' > /dev/null
"$floe" append ns.t "$tmp/a.ndjson" > /dev/null || fail "append dates"
"$floe" table schema ns.t widen d timestamp_ns > /dev/null || fail "widen d timestamp_ns"
"$floe" table schema ns.t widen e timestamp > /dev/null || fail "widen e timestamp"
echo '{"id":5,"d":"2026-10-07T01:02:03.123456789","e":"2026-10-07T01:02:03.5"}' > "$tmp/b.ndjson"
"$floe" append ns.t "$tmp/b.ndjson" > /dev/null || fail "append timestamps"
cat > "$tmp/want.ndjson" <<'JSON'
{"id":1,"d":"2026-10-06T00:00:00.000000000","e":"2026-10-06T00:00:00.000000"}
{"id":2,"d":"1969-12-31T00:00:00.000000000","e":"1900-01-01T00:00:00.000000"}
{"id":3,"d":"2200-01-01T00:00:00.000000000","e":"2200-01-01T00:00:00.000000"}
{"id":4,"d":null,"e":null}
{"id":5,"d":"2026-10-07T01:02:03.123456789","e":"2026-10-07T01:02:03.500000"}
JSON
"$floe" scan ns.t | sort | diff "$tmp/want.ndjson" - || fail "scan of the promoted table"
where() { "$floe" scan ns.t --where "$1" --columns id | sed 's/[^0-9]//g' | sort -n | tr '\n' ' '; }
[ "$(where "d = '2026-10-06T00:00:00'")" = "1 " ] || fail "d = midnight"
[ "$(where "d >= '2026-10-06T00:00:00.000000001'")" = "3 5 " ] || fail "d >= 1 ns past midnight"
[ "$(where "e < '1969-12-31T23:59:59'")" = "2 " ] || fail "e < ..."
skipped() { "$floe" scan ns.t --plan --where "$1" | sed -n 's/.* \([0-9]*\) by column metrics/\1/p'; }
[ "$(skipped "e < '1969-12-31T23:59:59'")" = 4 ] || fail "pruning by date bounds: $(skipped "e < '1969-12-31T23:59:59'")"
[ "$(skipped "e > '2026-10-06T00:00:00'")" = 3 ] || fail "pruning at the bound: $(skipped "e > '2026-10-06T00:00:00'")"
"$floe" delete ns.t --where "id = 4" > /dev/null || fail "delete"
grep -v '"id":4' "$tmp/want.ndjson" > "$tmp/want2.ndjson"
"$floe" rewrite ns.t --option min-input-files=1 --option rewrite-all=true > "$tmp/rewrite.txt" ||
  fail "rewrite: $(cat "$tmp/rewrite.txt")"
grep -q '^rewrote 4 data files' "$tmp/rewrite.txt" || fail "rewrite: $(cat "$tmp/rewrite.txt")"
"$floe" scan ns.t | sort | diff "$tmp/want2.ndjson" - || fail "scan after rewrite"
[ "$(skipped "e < '1969-12-31T23:59:59'")" = 3 ] || fail "pruning after rewrite"
files=$("$floe" files ns.t | cut -f1 | sed 's|^file://||; s/.*/'"'"'&'"'"'/' | paste -sd,)
(cd "$js" && node duckdb_query.mjs "SELECT id::VARCHAR AS id, epoch_ns(d)::VARCHAR AS d,
   epoch_us(e)::VARCHAR AS e FROM read_parquet([$files]) ORDER BY id") > "$tmp/duck.ndjson" ||
  fail "DuckDB read"
cat > "$tmp/duck_want.ndjson" <<'JSON'
{"id":"1","d":"1791244800000000000","e":"1791244800000000"}
{"id":"2","d":"-86400000000000","e":"-2208988800000000"}
{"id":"3","d":"7258118400000000000","e":"7258118400000000"}
{"id":"5","d":"1791334923123456789","e":"1791334923500000"}
JSON
diff "$tmp/duck_want.ndjson" "$tmp/duck.ndjson" || fail "DuckDB reads the rewritten files otherwise"
echo "date_promotion: promoted table ok"

# ---- 3. out of the nanosecond range ----------------------------------------------------
echo '{"id":1,"d":"2300-01-01","e":"2300-01-01"}' > "$tmp/far.ndjson"
"$floe" table create ns.far --schema "$tmp/schema.json" --property format-version=3 > /dev/null
"$floe" append ns.far "$tmp/far.ndjson" > /dev/null
"$floe" append ns.far "$tmp/far.ndjson" > /dev/null
"$floe" table schema ns.far widen d timestamp_ns > /dev/null || fail "widen far"
if "$floe" scan ns.far > /dev/null 2> "$tmp/err"; then fail "scan of 2300-01-01 as timestamp_ns"; fi
grep -q 'column d: date 2300-01-01 read as timestamp_ns (the column was promoted from date) is outside the nanosecond timestamp range' "$tmp/err" ||
  fail "scan: $(cat "$tmp/err")"
"$floe" rewrite ns.far --option min-input-files=2 > "$tmp/rw.txt" 2> "$tmp/err" && fail "rewrite of 2300-01-01 as timestamp_ns"
grep -q 'column d: date 2300-01-01 read as timestamp_ns (the column was promoted' "$tmp/err" ||
  fail "rewrite: $(cat "$tmp/err")"
[ "$("$floe" files ns.far | wc -l)" = 2 ] || fail "the failed rewrite changed the table"
[ "$("$floe" scan ns.far --columns id,e)" = '{"id":1,"e":"2300-01-01"}
{"id":1,"e":"2300-01-01"}' ] || fail "the other columns read"
echo "date_promotion: ok"
