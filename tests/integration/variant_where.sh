#!/usr/bin/env bash
# variant_where.sh - `floe scan --where` on paths inside a variant column.
#
#  1. a format v3 table whose `payload` variant holds objects, nested objects, arrays,
#     strings, integers, decimals, big integers, booleans, variant nulls, missing keys, a
#     key with a dot and a non-ASCII string, in two data files: each filter selects the
#     rows DuckDB selects for the equivalent query over the same data files (where DuckDB
#     can say: it refuses to compare a string with a number, which floe answers as false,
#     so those cases, and what DuckDB has no form for, are checked against ids worked out
#     by hand);
#  2. every filter gives the same rows with and without pruning (--no-prune), also ANDed
#     with a predicate on a column that does prune;
#  3. a literal that is neither a number, a 'string', true nor false is refused.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "variant_where: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "variant_where: FAIL: $*" >&2; exit 1; }

export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
"$floe" namespace create ns > /dev/null

# ids floe selects, sorted, on one line
ids() { "$floe" scan "$1" --columns id --where "$2" "${@:3}" | sed 's/[^0-9]//g' | sort -n | tr '\n' ' '; }

# 1. the table
cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"payload","required":false,"type":"variant"}]}
JSON
cat > "$tmp/a.ndjson" <<'JSON'
{"id":1,"payload":{"user":{"country":"FR","age":30,"vip":true},"n":1.50,"tags":["x"]}}
{"id":2,"payload":{"user":{"country":"DE","age":"41","vip":false},"n":12345678901234567890}}
{"id":3,"payload":{"user":null,"n":-2}}
{"id":4,"payload":{"user":{"country":"FR","age":45.5},"n":-0.25}}
{"id":5,"payload":[{"user":{"country":"FR"}}]}
{"id":6}
JSON
cat > "$tmp/b.ndjson" <<'JSON'
{"id":7,"payload":{"user":{"country":"Fé","a.b":1,"age":7},"n":1e3}}
{"id":8,"payload":{"user":{"country":"ES","age":-3,"address":{"city":"Madrid","zip":"28001"}}}}
{"id":9,"payload":{"user":"FR","n":null}}
{"id":10,"payload":"plain"}
{"id":11,"payload":{"user":{"country":"FRA","age":30.0,"address":{"city":null}},"n":12345678901234567891}}
{"id":12,"payload":{}}
JSON
"$floe" table create ns.ev --schema "$tmp/schema.json" --property format-version=3 > /dev/null
"$floe" append ns.ev "$tmp/a.ndjson" > /dev/null || fail "append a"
"$floe" append ns.ev "$tmp/b.ndjson" > /dev/null || fail "append b"
files=$(find "$tmp/wh" -name '*.parquet' | sort | paste -sd,)
[ "$(echo "$files" | tr ',' '\n' | wc -l)" = 2 ] || fail "expected two data files: $files"

# floe filter | DuckDB condition (empty: not expressible there) | ids by hand
cases=(
  "payload.user.country = 'FR'|variant_typeof(payload.user.country) = 'VARCHAR' AND payload.user.country::VARCHAR = 'FR'|1 4"
  "payload.user.country != 'FR'|variant_typeof(payload.user.country) = 'VARCHAR' AND payload.user.country::VARCHAR != 'FR'|2 7 8 11"
  "payload.user.country > 'FR'|variant_typeof(payload.user.country) = 'VARCHAR' AND payload.user.country::VARCHAR > 'FR'|7 11"
  "payload.user.country IN ('DE', 'Fé')|variant_typeof(payload.user.country) = 'VARCHAR' AND payload.user.country::VARCHAR IN ('DE', 'Fé')|2 7"
  "payload.user.country LIKE 'FR%'|variant_typeof(payload.user.country) = 'VARCHAR' AND payload.user.country::VARCHAR LIKE 'FR%'|1 4 11"
  "payload.user.country IS NULL|payload.user.country IS NULL|3 5 6 9 10 12"
  "payload.user.country IS NOT NULL|payload.user.country IS NOT NULL|1 2 4 7 8 11"
  "payload.user.age = 30||1 11"
  "payload.user.age >= 30||1 4 11"
  "payload.user.age < 10||7 8"
  "NOT payload.user.age < 10||1 2 4 11"
  "payload.user.age = '41'||2"
  "payload.user.age != 30||2 4 7 8"
  "payload.n > 1.5||2 7 11"
  "payload.n <= 1.500||1 3 4"
  "payload.n = 12345678901234567890||2"
  "payload.n < 12345678901234567891||1 2 3 4 7"
  "payload.n > -1e-1||1 2 7 11"
  "payload.n IS NULL|payload.n IS NULL|5 6 8 9 10 12"
  "payload.user.vip = true|variant_typeof(payload.user.vip) LIKE 'BOOL%' AND payload.user.vip::BOOLEAN = true|1"
  "payload.user.vip != TRUE|variant_typeof(payload.user.vip) LIKE 'BOOL%' AND payload.user.vip::BOOLEAN != true|2"
  "payload.user.\`a.b\` = 1||7"
  "payload.user.address.city = 'Madrid'|variant_typeof(payload.user.address.city) = 'VARCHAR' AND payload.user.address.city::VARCHAR = 'Madrid'|8"
  "payload.user.address.city IS NULL|payload.user.address.city IS NULL|1 2 3 4 5 6 7 9 10 11 12"
  "payload.user.address.zip = '28001' OR payload.user.country = 'DE'||2 8"
  "payload.user IS NULL|payload.user IS NULL|3 5 6 10 12"
  "payload.user = 'FR'||9"
  "payload.tags IS NOT NULL|payload.tags IS NOT NULL|1"
  "payload.tags = 'x'||"
  "payload IS NULL|payload IS NULL|6"
  "payload = 'plain'||10"
  "id > 6 AND payload.user.country LIKE 'F%'||7 11"
)
: > "$tmp/duck.tsv"
k=0
for c in "${cases[@]}"; do
  IFS='|' read -r w dq want <<< "$c"
  got=$(ids ns.ev "$w") || fail "floe scan --where \"$w\""
  [ "$got" = "$(echo "$want" | tr ' ' '\n' | sed '/^$/d' | sort -n | tr '\n' ' ')" ] ||
    fail "--where \"$w\": floe selected [$got], expected [$want]"
  # 2. no pruning, the same rows
  [ "$(ids ns.ev "$w" --no-prune)" = "$got" ] || fail "--where \"$w\": --no-prune differs"
  [ "$(ids ns.ev "id <= 6 AND ($w)")" = "$(ids ns.ev "id <= 6 AND ($w)" --no-prune)" ] ||
    fail "--where \"id <= 6 AND ($w)\": --no-prune differs"
  if [ -n "$dq" ]; then
    k=$((k + 1))
    "$floe" scan ns.ev --columns id --where "$w" > "$tmp/ids.$k"
    printf '%s\t%s\t%s\n' "$files" "$dq" "$tmp/ids.$k" >> "$tmp/duck.tsv"
  fi
done
node "$js/variant_where.mjs" "$tmp/duck.tsv" || fail "DuckDB disagrees"
echo "variant_where: ${#cases[@]} filters on the table, $k compared with DuckDB"

# 3. refusals
for w in "payload.user.age = abc" "payload.n = 1e" "payload.user = NULL"; do
  if "$floe" scan ns.ev --where "$w" > /dev/null 2> "$tmp/err"; then fail "--where \"$w\" accepted"; fi
  grep -q 'filter: ' "$tmp/err" || fail "--where \"$w\": $(cat "$tmp/err")"
done
echo "variant_where: ok"
