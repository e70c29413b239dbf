#!/usr/bin/env bash
# append_unknown_nulls.sh - floe append of Parquet files to a v3 table with a column of
# type unknown (issue 23, adversary r1). Such a column is always null: readers ignore the
# file's column for it whatever its type (spec Appendix A).
#  1. A file from another writer (DuckDB) whose column for it is all null (an INT32 column
#     of nulls) is accepted, with and without --copy; its rows read back with null there.
#  2. A file whose column holds a value is refused, naming the file, the row group, the
#     column and how many values, and nothing is committed.
#  3. NDJSON: null is accepted, a value rejected with the reason (as before).
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "append_unknown_nulls: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "append_unknown_nulls: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true

cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},
 {"id":2,"name":"u","required":false,"type":"unknown"}]}
JSON
"$floe" namespace create ns > /dev/null
"$floe" table create ns.t --schema "$tmp/schema.json" --property format-version=3 > /dev/null

duck() { node "$js/duckdb_query.mjs" "$1" > /dev/null || fail "duckdb: $1"; }
duck "COPY (SELECT 1::BIGINT AS id, NULL::INTEGER AS u UNION ALL SELECT 2, NULL) TO '$tmp/nulls.parquet' (FORMAT parquet, FIELD_IDS {id: 1, u: 2})"
duck "COPY (SELECT 3::BIGINT AS id, NULL::VARCHAR AS u) TO '$tmp/nulls2.parquet' (FORMAT parquet, FIELD_IDS {id: 1, u: 2})"
duck "COPY (SELECT 4::BIGINT AS id, NULL::INTEGER AS u UNION ALL SELECT 5, 7) TO '$tmp/value.parquet' (FORMAT parquet, FIELD_IDS {id: 1, u: 2})"

# 1. all null: accepted
"$floe" append ns.t "$tmp/nulls.parquet" --copy > "$tmp/out" 2>&1 || fail "append of nulls (--copy): $(cat "$tmp/out")"
cp "$tmp/nulls2.parquet" "$tmp/wh/ns/t/data/nulls2.parquet"
"$floe" append ns.t "$tmp/wh/ns/t/data/nulls2.parquet" > "$tmp/out" 2>&1 || fail "append of nulls in place: $(cat "$tmp/out")"
# 2. a value: refused, nothing committed
snaps_before=$("$floe" snapshots ns.t | wc -l)
if "$floe" append ns.t "$tmp/value.parquet" --copy > "$tmp/out" 2>&1; then
  fail "a value in an unknown column was accepted"
fi
grep -q "value.parquet: row group 0: column u holds 1 non-null value(s), but its type in the table is unknown" "$tmp/out" ||
  fail "unclear refusal: $(cat "$tmp/out")"
[ "$("$floe" snapshots ns.t | wc -l)" = "$snaps_before" ] || fail "the refused append committed"
# 3. NDJSON
printf '{"id":6,"u":null}\n{"id":7}\n{"id":8,"u":1}\n' > "$tmp/a.ndjson"
"$floe" append ns.t "$tmp/a.ndjson" > "$tmp/out" 2>&1 || fail "NDJSON append: $(cat "$tmp/out")"
grep -rq "type unknown takes only null" "$tmp/wh/_quarantine" || fail "NDJSON value not quarantined with its reason"
"$floe" scan ns.t > "$tmp/rows" || fail "scan"
python3 - "$tmp/rows" <<'PY' || fail "rows differ: $(cat "$tmp/rows")"
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["id"])
assert [r["id"] for r in rows] == [1, 2, 3, 6, 7], rows
assert all(r.get("u") is None for r in rows), rows
PY
"$floe" files ns.t | cut -f1 > "$tmp/files"
[ "$(wc -l < "$tmp/files")" = 3 ] || fail "files: $(cat "$tmp/files")"
echo "append_unknown_nulls: ok"
