#!/usr/bin/env bash
# variant_nul_names.sh - a Parquet file whose schema holds a name with a NUL byte (DuckDB
# shreds a variant key "a\u0000b" into a group of that name; Parquet names are
# length-prefixed) is refused by every floe read, naming the file and the byte, never read
# with the name cut at the NUL (adversary adv23e D1: `floe cat` printed {"a":2,"a":1} for
# {"a":1,"a\u0000b":2}, `floe append` took the file, --where payload.a = 1 matched
# nothing, and `floe rewrite` wrote a file floe could no longer read). The same values
# written without the NUL key are read as DuckDB reads them (the control).
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "variant_nul_names: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "variant_nul_names: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
duck() { # duck FILE JSON1 JSON2: a Parquet file of ids 1, 2 and the JSON values as VARIANT
  node "$js/duckdb_query.mjs" "COPY (
    SELECT 1::BIGINT AS id, ('$2'::JSON)::VARIANT AS payload UNION ALL
    SELECT 2, ('$3'::JSON)::VARIANT
  ) TO '$1' (FORMAT parquet, FIELD_IDS {id: 1, payload: 2})" > /dev/null || fail "duckdb $1"
}
duck "$tmp/nul.parquet" '{"a":1,"a\u0000b":2}' '{"a":3,"a\u0000b":4}'
duck "$tmp/nul2.parquet" '{"z\u0000":5,"\u0000":6}' '{"z\u0000":7,"\u0000":8}'
duck "$tmp/ok.parquet" '{"a":1,"ab":2}' '{"a":3,"ab":4}'
# DuckDB shredded the NUL keys (else this test tests nothing)
names=$(node "$js/duckdb_query.mjs" "SELECT name FROM parquet_schema('$tmp/nul.parquet')") ||
  fail "duckdb parquet_schema"
grep -q 'a\\u0000b' <<< "$names" || fail "DuckDB did not shred a\\0b: $(tr '\n' ' ' <<< "$names")"

echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"payload","required":false,"type":"variant"}]}' > "$tmp/s.json"
"$floe" namespace create t > /dev/null
"$floe" table create t.v --schema "$tmp/s.json" --property format-version=3 > /dev/null

for f in nul nul2; do
  ! "$floe" cat "$tmp/$f.parquet" > "$tmp/out" 2> "$tmp/err" || fail "floe cat $f: $(cat "$tmp/out")"
  [ ! -s "$tmp/out" ] || fail "floe cat $f printed rows: $(cat "$tmp/out")"
  grep -q "$tmp/$f.parquet: footer: schema element name .* holds a NUL byte, which floe cannot read (byte [0-9]*)" \
    "$tmp/err" || fail "floe cat $f: error $(cat "$tmp/err")"
  ! "$floe" append t.v "$tmp/$f.parquet" > "$tmp/out" 2> "$tmp/err" || fail "floe append $f taken"
  grep -q "$tmp/$f.parquet.*holds a NUL byte" "$tmp/err" || fail "floe append $f: error $(cat "$tmp/err")"
  "$floe" inspect "$tmp/$f.parquet" > /dev/null 2>&1 && fail "floe inspect $f read the file"
done
[ -z "$("$floe" scan t.v)" ] || fail "a refused file was committed: $("$floe" scan t.v)"

# the control: the same shape without the NUL is read as DuckDB reads it, through append,
# scan, --where and rewrite
"$floe" cat "$tmp/ok.parquet" > "$tmp/cat" || fail "floe cat ok"
printf '{"id":1,"payload":{"a":1,"ab":2}}\n{"id":2,"payload":{"a":3,"ab":4}}\n' > "$tmp/want"
diff "$tmp/want" "$tmp/cat" || fail "floe cat of the control"
"$floe" append t.v "$tmp/ok.parquet" > /dev/null || fail "append of the control"
[ "$("$floe" scan t.v --where 'payload.a = 1')" = '{"id":1,"payload":{"a":1,"ab":2}}' ] ||
  fail "--where payload.a = 1: $("$floe" scan t.v --where 'payload.a = 1')"
"$floe" rewrite t.v --option rewrite-all=true > /dev/null || fail "rewrite"
"$floe" scan t.v | sort > "$tmp/scan"
diff "$tmp/want" "$tmp/scan" || fail "scan after rewrite"
echo "variant_nul_names: ok"
