#!/usr/bin/env bash
# variant_float_text.sh - a variant float (primitive 14, as another writer stores it) prints
# as the shortest decimal that reads back to the same float, as Spark prints it (the
# parquet-testing dictionary: primitive_float 1234567940.0): 0.1f as 0.1, not as the
# double it widens to, 0.10000000149011612 (issue 23, adversary r5). Doubles keep their
# shortest round-trip form; floe cat and floe scan (after floe append) agree.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "variant_float_text: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "variant_float_text: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
node "$js/duckdb_query.mjs" "COPY (
  SELECT 1::BIGINT AS id, (0.1::FLOAT)::VARIANT AS v UNION ALL
  SELECT 2, (3.4028235e38::FLOAT)::VARIANT UNION ALL
  SELECT 3, (1e-45::FLOAT)::VARIANT UNION ALL
  SELECT 4, (16777217::FLOAT)::VARIANT UNION ALL
  SELECT 5, (-2.5::FLOAT)::VARIANT UNION ALL
  SELECT 6, (0.1::DOUBLE)::VARIANT UNION ALL
  SELECT 7, (1234567890.1234::DOUBLE)::VARIANT UNION ALL
  SELECT 8, (1.1::FLOAT)::VARIANT
) TO '$tmp/f.parquet' (FORMAT parquet, FIELD_IDS {id: 1, v: 2})" > /dev/null || fail "duckdb"
cat > "$tmp/want" <<'W'
{"id":1,"v":0.1}
{"id":2,"v":3.4028235e+38}
{"id":3,"v":1e-45}
{"id":4,"v":16777216}
{"id":5,"v":-2.5}
{"id":6,"v":0.1}
{"id":7,"v":1234567890.1234}
{"id":8,"v":1.1}
W
"$floe" cat "$tmp/f.parquet" > "$tmp/cat" || fail "floe cat"
diff "$tmp/want" "$tmp/cat" || fail "floe cat prints the variant floats otherwise"
# the values read back as the floats stored
python3 - "$tmp/cat" <<'PY' || fail "a printed float does not read back"
import json, struct, sys
stored = [0.1, 3.4028235e38, 1e-45, 16777217, -2.5]
for row, x in zip((json.loads(l) for l in open(sys.argv[1])), stored):
    f = lambda d: struct.unpack('<f', struct.pack('<f', d))[0]
    assert f(row['v']) == f(x), (row, x)
PY
"$floe" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"v","required":false,"type":"variant"}]}' > "$tmp/s.json"
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 > /dev/null
"$floe" append ns.t "$tmp/f.parquet" --copy > /dev/null || fail "append"
"$floe" scan ns.t > "$tmp/scan" || fail "scan"
diff "$tmp/want" "$tmp/scan" || fail "floe scan prints the variant floats otherwise"
echo "variant_float_text: ok"
