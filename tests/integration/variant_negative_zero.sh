#!/usr/bin/env bash
# variant_negative_zero.sh - a JSON negative zero stored into a variant (issue 23).
#
# The rule (include/floe/variant.h): a negative zero with a fraction or an exponent
# (-0.0, -0.000, -0e5, -0.0E-3) is a variant double -0.0 (a decimal's unscaled zero has
# no sign), printed back as -0.0; an integer -0 is the integer 0 (int8), as DuckDB's and
# Spark's JSON casts store it. Checked:
#  1. floe cat prints each value back as the rule says (unshredded);
#  2. DuckDB reads floe's file to the same text and variant types;
#  3. DuckDB's own JSON -> VARIANT -> JSON of each negative-zero input gives floe's text;
#  4. shredded (--variant-shredding 'v:double,w.a:double'): floe cat as unshredded, DuckDB
#     reads the same; the typed_value double columns' statistics are min -0.0, max +0.0
#     (parquet.thrift: a zero min is written -0.0, a zero max +0.0), also when every value
#     is -0.0; and so are plain DOUBLE and FLOAT columns' (all -0.0, all +0.0, mixed);
#  5. a v3 table: floe scan prints what floe cat printed; --where v = 0 / v < 0 / v.a = 0
#     select the rows DuckDB selects with TRY_CAST(v AS DOUBLE) (SQL: -0.0 = 0), pruned
#     and with --no-prune.
# Every check runs; the script fails with the count of failed checks.
set -uo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "variant_negative_zero: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
failed=0 checks=0
# check NAME WANT GOT: one check, compared as text
check() {
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    failed=$((failed + 1))
    printf 'variant_negative_zero: FAIL: %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3" >&2
  fi
}
die() { echo "variant_negative_zero: FAIL: $*" >&2; exit 1; }
dq() { node "$js/duckdb_query.mjs" "$1"; }

cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"v","required":false,"type":"variant"},
 {"id":3,"name":"w","required":false,"type":"variant"},
 {"id":4,"name":"d","required":false,"type":"double"},
 {"id":5,"name":"f","required":false,"type":"float"}]}
JSON
cat > "$tmp/in.ndjson" <<'JSON'
{"id":1,"v":-0,"w":{"a":-0.0},"d":-0.0,"f":-0.0}
{"id":2,"v":-0.0,"w":{"a":0e0},"d":0.0,"f":0}
{"id":3,"v":-0e5,"w":{"a":-0.000}}
{"id":4,"v":-0.000,"w":{"a":[-0.0,-0]}}
{"id":5,"v":0.0,"w":{"a":-0}}
{"id":6,"v":-0.0E-3,"w":{"a":-0e1}}
{"id":7,"v":{"a":-0.0,"b":[-0,-0.00]}}
{"id":8,"v":-0.0e0}
{"id":9,"v":0}
{"id":10,"v":-1.50}
JSON
# floe's text of v and w for each row, and DuckDB's variant_typeof of v
cat > "$tmp/want" <<'JSON'
{"id":1,"v":0,"w":{"a":-0.0},"d":-0,"f":-0}
{"id":2,"v":-0.0,"w":{"a":0},"d":0,"f":0}
{"id":3,"v":-0.0,"w":{"a":-0.0},"d":null,"f":null}
{"id":4,"v":-0.0,"w":{"a":[-0.0,0]},"d":null,"f":null}
{"id":5,"v":0.0,"w":{"a":0},"d":null,"f":null}
{"id":6,"v":-0.0,"w":{"a":-0.0},"d":null,"f":null}
{"id":7,"v":{"a":-0.0,"b":[0,-0.0]},"w":null,"d":null,"f":null}
{"id":8,"v":-0.0,"w":null,"d":null,"f":null}
{"id":9,"v":0,"w":null,"d":null,"f":null}
{"id":10,"v":-1.50,"w":null,"d":null,"f":null}
JSON
want_types='INT8 DOUBLE DOUBLE DOUBLE DECIMAL(0, 1) DOUBLE OBJECT(a, b) DOUBLE INT8 DECIMAL(3, 2)'

"$floe" convert -s "$tmp/s.json" -o "$tmp/plain" "$tmp/in.ndjson" > /dev/null || die "convert"
"$floe" convert -s "$tmp/s.json" -o "$tmp/shred" --variant-shredding 'v:double,w.a:double' \
  "$tmp/in.ndjson" > /dev/null || die "convert --variant-shredding"
plain=$(ls "$tmp"/plain/*.parquet) shred=$(ls "$tmp"/shred/*.parquet)

# 1. floe cat, row by row
"$floe" cat "$plain" > "$tmp/cat" || die "floe cat"
for i in $(seq 1 10); do
  check "floe cat row $i" "$(sed -n "${i}p" "$tmp/want")" "$(sed -n "${i}p" "$tmp/cat")"
done

# 2. DuckDB reads floe's file: the text of v and w (its leading-zero-less decimals aside)
#    and v's variant type
dq "SELECT id, v::JSON::VARCHAR AS v, w::JSON::VARCHAR AS w, variant_typeof(v) AS t
    FROM read_parquet('$plain') ORDER BY id" > "$tmp/duck" || die "duckdb read"
got_types=$(node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  console.log(rows.map((r) => r.t).join(" "))' "$tmp/duck")
check "DuckDB's variant types of v" "$want_types" "$got_types"
# same A B: the two JSON texts hold the same value, the sign of each zero included
same() { node -e '
  const z = (s) => s.replace(/(^|[^0-9"])\.([0-9])/g, "$10.$2"); // DuckDB prints .5 for 0.5
  const eq = (a, b) => typeof a === "number" ? Object.is(a, b) :
    a === null || typeof a !== "object" ? a === b :
    typeof b === "object" && b !== null && Array.isArray(a) === Array.isArray(b) &&
    Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => eq(a[k], b[k]));
  console.log(eq(JSON.parse(z(process.argv[1])), JSON.parse(z(process.argv[2]))) ? "same" :
    process.argv[1] + " vs " + process.argv[2])' -- "$1" "$2"; }
for i in $(seq 1 10); do
  for c in v w; do
    duck=$(sed -n "${i}p" "$tmp/duck" | node -e '
      const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
      console.log(r[process.argv[1]] === null ? "null" : r[process.argv[1]])' "$c")
    mine=$(sed -n "${i}p" "$tmp/cat" | node -e '
      console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(0, "utf8"))[process.argv[1]],
        (k, v) => Object.is(v, -0) ? "NEGZERO" : v).replace(/"NEGZERO"/g, "-0.0"))' "$c")
    check "DuckDB reads $c of row $i of floe's file as floe cat prints it" same "$(same "$mine" "$duck")"
  done
done

# 3. DuckDB's own JSON -> VARIANT -> JSON of the negative zeros (rows 1-4, 6, 8)
for text in -0 -0.0 -0e5 -0.000 -0.0E-3 -0.0e0; do
  i=$(grep -n -F -- "\"v\":$text," "$tmp/in.ndjson" | cut -d: -f1; grep -n -F -- "\"v\":$text}" "$tmp/in.ndjson" | cut -d: -f1)
  duck=$(dq "SELECT ('$text'::JSON)::VARIANT::JSON::VARCHAR AS j" | node -e '
    console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).j)')
  mine=$(sed -n "${i}p" "$tmp/cat" | node -e '
    const l = require("fs").readFileSync(0, "utf8");
    console.log(l.slice(l.indexOf("\"v\":") + 4, l.indexOf(",\"w\":")))')
  check "JSON $text: DuckDB's JSON::VARIANT text vs floe's" "$duck" "$mine"
done

# 4. shredded: the same text; DuckDB reads the same; typed_value statistics
"$floe" cat "$shred" > "$tmp/cat_shred" || die "floe cat (shredded)"
check "floe cat shredded = unshredded" "$(cat "$tmp/cat")" "$(cat "$tmp/cat_shred")"
dq "SELECT id, v::JSON::VARCHAR AS v, w::JSON::VARCHAR AS w, variant_typeof(v) AS t
    FROM read_parquet('$shred') ORDER BY id" > "$tmp/duck_shred" || die "duckdb read (shredded)"
check "DuckDB reads shredded = unshredded" "$(cat "$tmp/duck")" "$(cat "$tmp/duck_shred")"
stats() { # FILE COLUMN-PATH: "min max" as DuckDB reads the chunk statistics
  dq "SELECT stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata('$1')
      WHERE path_in_schema = '$2'" | node -e '
    const t = require("fs").readFileSync(0, "utf8").trim();
    if (!t) { console.log("no such column"); process.exit(0) }
    const r = JSON.parse(t); console.log(r.lo + " " + r.hi)'
}
check "shredded v.typed_value (only -0.0) statistics" "-0.0 0.0" "$(stats "$shred" "v, typed_value")"
check "shredded w.a typed_value (-0.0 and +0.0) statistics" "-0.0 0.0" \
  "$(stats "$shred" 'w, typed_value, a, typed_value')"
check "plain double column statistics" "-0.0 0.0" "$(stats "$plain" d)"
check "plain float column statistics" "-0.0 0.0" "$(stats "$plain" f)"
printf '{"id":1,"d":-0.0,"f":-0.0}\n{"id":2,"d":-0e0,"f":-0.0}\n' > "$tmp/neg.ndjson"
printf '{"id":1,"d":0.0,"f":0}\n{"id":2,"d":0,"f":0e3}\n' > "$tmp/pos.ndjson"
"$floe" convert -s "$tmp/s.json" -o "$tmp/neg" "$tmp/neg.ndjson" > /dev/null || die "convert neg"
"$floe" convert -s "$tmp/s.json" -o "$tmp/pos" "$tmp/pos.ndjson" > /dev/null || die "convert pos"
for k in neg pos; do
  f=$(ls "$tmp/$k"/*.parquet)
  check "double column of $k zeros: statistics" "-0.0 0.0" "$(stats "$f" d)"
  check "float column of $k zeros: statistics" "-0.0 0.0" "$(stats "$f" f)"
done
"$floe" cat "$(ls "$tmp"/neg/*.parquet)" > "$tmp/cat_neg" || die "floe cat neg"
check "negative zeros of double and float columns keep their sign" \
  '{"id":1,"v":null,"w":null,"d":-0,"f":-0} {"id":2,"v":null,"w":null,"d":-0,"f":-0}' \
  "$(tr '\n' ' ' < "$tmp/cat_neg" | sed 's/ $//')"

# 5. a v3 table of both files: scan prints what cat printed; --where as DuckDB selects
"$floe" namespace create ns > /dev/null || die "namespace"
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 > /dev/null ||
  die "table create"
"$floe" append ns.t "$plain" --copy > /dev/null || die "append"
"$floe" append ns.t "$shred" --copy > /dev/null || die "append (shredded)"
"$floe" scan ns.t > "$tmp/scan" || die "scan"
check "floe scan = floe cat of both files" "$(sort "$tmp/cat" "$tmp/cat_shred")" "$(sort "$tmp/scan")"
ids() { node -e '
  const t = require("fs").readFileSync(0, "utf8").trim();
  console.log(t ? t.split("\n").map((l) => JSON.parse(l).id).sort((a, b) => a - b).join(" ") : "")'; }
for where in 'v = 0' 'v < 0' 'v > 0' 'v = -0.0' 'v.a = 0' 'w.a = 0' 'w.a < 0'; do
  col=${where%% *}
  sql=$(echo "$where" | sed -E "s/^v\.a/TRY_CAST(variant_extract(v, 'a') AS DOUBLE)/; s/^w\.a/TRY_CAST(variant_extract(w, 'a') AS DOUBLE)/; s/^v /TRY_CAST(v AS DOUBLE) /")
  duck=$(dq "SELECT id FROM read_parquet(['$plain', '$shred']) WHERE $sql" | ids)
  for prune in "" --no-prune; do
    got=$("$floe" scan ns.t --where "$where" $prune | ids)
    check "scan --where '$where' $prune (as DuckDB's $sql; column $col)" "$duck" "$got"
  done
done

if [ "$failed" -gt 0 ]; then
  echo "variant_negative_zero: $failed of $checks checks failed" >&2
  exit 1
fi
echo "variant_negative_zero: ok ($checks checks)"
