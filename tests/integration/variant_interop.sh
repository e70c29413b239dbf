#!/usr/bin/env bash
# variant_interop.sh - variant columns written by `floe convert`, read back by floe and by
# DuckDB (an independent reader of Parquet VARIANT).
#
# The corpus: every value the shredded_variant conformance files hold (floe cat of each
# file it reads; objects, arrays, every primitive type as floe prints it), plus edge cases
# of JSON itself (big and small numbers, decimals keeping their scale, escapes, deep and
# wide nesting, empty containers, a top-level null and a missing field). Converted with a
# schema whose `var` field is a variant:
#  1. floe cat prints every row's value as the input has it, text for text (the input is
#     in floe's own rendering, which is canonical);
#  2. DuckDB reads the same values (tests/js/variant_json.mjs: equal as JSON);
#  3. a record with a duplicate key inside the variant is quarantined, not written;
#  4. a format v3 table with the variant column: floe append, then floe scan prints what
#     floe cat printed (also projected, and filtered on another column); after a second
#     append, floe rewrite compacts the two files and the scan is unchanged.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
conf=${FLOE_CONFORMANCE:-$src/../shared/conformance}
sv=$conf/parquet-testing/shredded_variant
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "variant_interop: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
[ -d "$sv" ] || { echo "variant_interop: $sv missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/variant_corpus.sh"
fail() { echo "variant_interop: FAIL: $*" >&2; exit 1; }

# the corpus: the conformance values, renumbered
variant_conformance_values "$sv" "$tmp/values.ndjson"
cat >> "$tmp/values.ndjson" <<'JSON'
{"var":{"big":12345678901234567890,"neg":-9223372036854775808,"dec":1.50,"tiny":0.000001,"d":1e300,"z":-0,"s":"tab\tquote\"uni\u00e9\ud83d\ude00"}}
{"var":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}
{"var":{"":"empty key","a":{},"b":[],"c":[null,true,false]}}
{"var":null}
{}
JSON
node -e '
  const fs = require("fs");
  const lines = fs.readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.trim());
  let wide = "{";
  for (let i = 0; i < 300; i++) wide += (i ? "," : "") + JSON.stringify("k" + i) + ":" + i;
  lines.push("{\"var\":" + wide + "}}");
  const out = lines.map((l, i) => {
    const v = l.slice(l.indexOf("{") + 1).replace(/^"var":/, "").replace(/}$/, "");
    return l === "{}" ? `{"id":${i}}` : `{"id":${i},"var":${v}}`;
  });
  fs.writeFileSync(process.argv[2], out.join("\n") + "\n");
' "$tmp/values.ndjson" "$tmp/in.ndjson"
n=$(wc -l < "$tmp/in.ndjson")
cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"var","required":false,"type":"variant"}]}
JSON

"$floe" convert -s "$tmp/schema.json" -o "$tmp/out" "$tmp/in.ndjson" > /dev/null ||
  fail "convert"
"$floe" cat "$tmp/out"/part-*.parquet > "$tmp/cat.ndjson" || fail "floe cat"
# 1. floe prints what went in: the conformance values text for text (they are in floe's
#    own rendering), the edge cases equal as JSON (keys come out sorted, escapes decoded)
node -e '
  const fs = require("fs");
  const [a, b] = [1, 2].map((k) => fs.readFileSync(process.argv[k], "utf8").split("\n"));
  const nconf = Number(process.argv[3]);
  const eq = (x, y) => x === y || (typeof x === "object" && typeof y === "object" && x && y &&
    Array.isArray(x) === Array.isArray(y) && Object.keys(x).length === Object.keys(y).length &&
    Object.keys(x).every((k) => k in y && eq(x[k], y[k])));
  for (let i = 0; i < a.length; i++) {
    if (!a[i]) continue;
    const want = JSON.parse(a[i]);
    if (!("var" in want)) want.var = null;
    const ok = i < nconf ? a[i] === b[i] : eq(want, JSON.parse(b[i]));
    if (!ok) { console.error("row " + i + ": floe cat " + b[i] + "\n  expected " + a[i]); process.exit(1); }
  }' "$tmp/in.ndjson" "$tmp/cat.ndjson" "$nconf" || fail "floe cat differs from the input"
echo "variant_interop: floe read back $n values ($nconf from the conformance files)"

# 2. DuckDB
node "$js/variant_json.mjs" --column var "$tmp/in.ndjson" "$tmp/out"/part-*.parquet ||
  fail "DuckDB disagrees"

# 3. a duplicate key inside a variant is refused, the record quarantined
# with the column of the fault in the record, not in the variant's own text
printf '%s\n' '{"id":1,"var":{"a":1,"a":2}}' '{"id":2,"var":{"a":1}}' \
  '{"id":3,"var":{"x":{"b":1,"b":2}}}' '{"id":4,"var":1e999}' > "$tmp/dup.ndjson"
"$floe" convert -s "$tmp/schema.json" -o "$tmp/dup" "$tmp/dup.ndjson" > /dev/null || true
q=$tmp/dup/_quarantine/quarantine.ndjson
grep -q '"line":1,.*field .var. at column 15: variant JSON: duplicate key' "$q" ||
  fail "duplicate key not quarantined at column 15: $(cat "$q")"
grep -q '"line":3,.*field .var. at column 20: variant JSON: duplicate key' "$q" ||
  fail "nested duplicate key not quarantined at column 20: $(cat "$q")"
grep -q '"line":4,.*field .var. at column 15: variant JSON: number out of range' "$q" ||
  fail "1e999 not quarantined at column 15: $(cat "$q")"
[ "$("$floe" cat "$tmp/dup"/part-*.parquet)" = '{"id":2,"var":{"a":1}}' ] ||
  fail "duplicate-key file"

# 4. a v3 table
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
"$floe" namespace create ns > /dev/null
"$floe" table create ns.ev --schema "$tmp/schema.json" --property format-version=3 > /dev/null
"$floe" append ns.ev "$tmp/in.ndjson" > /dev/null || fail "append"
"$floe" scan ns.ev > "$tmp/scan.ndjson" || fail "scan"
sort -t: -k2 -n "$tmp/scan.ndjson" | cmp -s - <(sort -t: -k2 -n "$tmp/cat.ndjson") ||
  fail "floe scan differs from floe cat"
[ "$("$floe" scan ns.ev --columns var --where "id = 3")" = "$(sed -n 4p "$tmp/cat.ndjson" |
  sed 's/^{"id":3,/{/')" ] || fail "projected, filtered scan"
"$floe" append ns.ev "$tmp/in.ndjson" > /dev/null || fail "second append"
"$floe" scan ns.ev | sort > "$tmp/scan2.ndjson"
"$floe" rewrite ns.ev --option min-input-files=2 > "$tmp/rewrite.txt" || fail "rewrite"
grep -q '^rewrote 2 data files' "$tmp/rewrite.txt" || fail "rewrite: $(cat "$tmp/rewrite.txt")"
"$floe" scan ns.ev | sort | cmp -s - "$tmp/scan2.ndjson" || fail "scan after rewrite"
echo "variant_interop: ok"
