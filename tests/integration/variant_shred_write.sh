#!/usr/bin/env bash
# variant_shred_write.sh - floe writes variant columns shredded (VariantShredding.md) where
# `floe convert --variant-shredding` or the table property variant.shredding says, and
# every reader gets the same values back.
#
# The corpus: every value of the shredded_variant conformance files (objects with the keys
# a, b, c, d, arrays, every primitive), and cases written for shredding: values of the
# shredded type, of another type (an int where a string is shredded, a string, decimal,
# double or huge integer where a long is), missing fields, JSON nulls inside and as the
# whole value, nested objects shredded partly, objects over a primitive path, arrays,
# empty objects. A second schema has a variant shredded as a primitive at its top, one
# inside a struct and a list of variants (repetition).
#  1. the shredded files hold typed_value columns with values and statistics;
#  2. floe cat prints each shredded file exactly as the same input converted unshredded;
#  3. DuckDB (tests/js/variant_json.mjs) reads every shredded column to the same JSON;
#  4. a format v3 table with variant.shredding: append writes shredded files, floe scan
#     prints what floe cat printed; floe rewrite compacts shredded files into a shredded
#     file and the scan is unchanged (DuckDB reads the rewritten file the same); with the
#     property unset, rewrite writes them back unshredded, the scan still unchanged;
#  5. bad specs are refused: `table create/properties set` exit 2 for malformed text;
#     an append whose path names no variant column, conflicts, or names two keys of one
#     object equal but for ASCII case, fails and commits
#     nothing; convert --variant-shredding with a bad spec is a usage error.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
conf=${FLOE_CONFORMANCE:-$src/../shared/conformance}
sv=$conf/parquet-testing/shredded_variant
command -v node >/dev/null && command -v python3 >/dev/null &&
  [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "variant_shred_write: node, python3 and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
[ -d "$sv" ] || { echo "variant_shred_write: $sv missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/variant_corpus.sh"
fail() { echo "variant_shred_write: FAIL: $*" >&2; exit 1; }

# ---- the corpus
variant_conformance_values "$sv" "$tmp/values.ndjson"
cat >> "$tmp/values.ndjson" <<'JSON'
{"var":{"a":1,"b":"x","c":{"a":2,"b":"y"},"d":"z"}}
{"var":{"a":-128,"b":"a string longer than sixty-four bytes, so not a short string at all!!","c":{"a":-2147483648,"b":""}}}
{"var":{"a":9223372036854775807,"b":7,"c":{"a":2147483648,"b":null,"e":[1,2]},"d":null,"e":"kept"}}
{"var":{"a":"1","b":true,"c":"not an object","d":{"x":1}}}
{"var":{"a":1.5,"b":{"nested":"obj"},"c":[{"a":1}],"d":[]}}
{"var":{"a":1e3,"b":null,"c":{},"f":false}}
{"var":{"a":12345678901234567890,"c":{"b":"only b","z":0}}}
{"var":{"a":null}}
{"var":{"e":1}}
{"var":{}}
{"var":[{"a":1},{"b":"s"}]}
{"var":"a plain string"}
{"var":42}
{"var":true}
{"var":null}
{}
JSON
node -e '
  const fs = require("fs");
  const lines = fs.readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.trim());
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
spec='var.a:long, var.b:string, var.c.a:int, var.c.b:string, var.d:string, var.f:boolean'

cat > "$tmp/schema2.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":3,"name":"v2","required":false,"type":"variant"},
 {"id":4,"name":"ev","required":false,"type":{"type":"struct","fields":[
   {"id":5,"name":"data","required":true,"type":"variant"}]}},
 {"id":6,"name":"arr","required":false,"type":{"type":"list","element-id":7,
   "element-required":false,"element":"variant"}}]}
JSON
cat > "$tmp/in2.ndjson" <<'JSON'
{"id":1,"v2":5,"ev":{"data":{"ok":true,"x":1e3,"y":"z"}},"arr":[{"k":1},{"k":"s"},null,3,{"k":2,"j":1}]}
{"id":2,"v2":"str","ev":{"data":{"ok":"yes","x":1.5}},"arr":[]}
{"id":3,"v2":null,"ev":{"data":null},"arr":null}
{"id":4,"v2":-129,"ev":null,"arr":[[1],{"k":-2147483648},{"k":2147483648}]}
{"id":5,"v2":3000000000,"ev":{"data":[true]},"arr":[{}]}
{"id":6,"v2":{"a":1},"ev":{"data":{"ok":false,"x":-2.5e-3}},"arr":[{"k":null},{"j":{"k":1}}]}
{"id":7}
JSON
spec2='v2:long,ev.data.ok:boolean,ev.data.x:double,arr.element.k:int'

# ---- 1-3: convert shredded and unshredded
"$floe" convert -s "$tmp/schema.json" -o "$tmp/plain" "$tmp/in.ndjson" > /dev/null || fail "convert"
"$floe" convert -s "$tmp/schema.json" -o "$tmp/shred" --variant-shredding "$spec" \
  "$tmp/in.ndjson" > /dev/null || fail "convert --variant-shredding"
"$floe" convert -s "$tmp/schema2.json" -o "$tmp/plain2" "$tmp/in2.ndjson" > /dev/null ||
  fail "convert (2)"
"$floe" convert -s "$tmp/schema2.json" -o "$tmp/shred2" --variant-shredding "$spec2" \
  "$tmp/in2.ndjson" > /dev/null || fail "convert --variant-shredding (2)"

# 1. typed_value columns, with values and min/max statistics
check_typed() { # FILE COLUMN-PATH...: each has a non-null value and statistics
  local f=$1; shift
  "$floe" inspect --json "$f" | python3 -c '
import json, sys
d = json.load(sys.stdin)
cols = {c["path"]: c for g in d["row_groups"] for c in g["columns"]}
for p in sys.argv[1:]:
    c = cols.get(p)
    if c is None: sys.exit("no column " + p + " in " + ", ".join(cols))
    st = c.get("statistics") or {}
    if st.get("null_count", 0) >= c["num_values"] or "min" not in st or "max" not in st:
        sys.exit(p + ": no values or no min/max: " + json.dumps(st))
 ' "$@" || fail "$f: typed_value columns"
}
check_typed "$tmp/shred/part-00000.parquet" var.typed_value.a.typed_value \
  var.typed_value.b.typed_value var.typed_value.c.typed_value.a.typed_value \
  var.typed_value.c.typed_value.b.typed_value var.typed_value.d.typed_value \
  var.typed_value.f.typed_value
check_typed "$tmp/shred2/part-00000.parquet" v2.typed_value ev.data.typed_value.ok.typed_value \
  ev.data.typed_value.x.typed_value arr.list.element.typed_value.k.typed_value
# the statistics are the typed values' bounds
"$floe" inspect --json "$tmp/shred/part-00000.parquet" | python3 -c '
import json, sys
d = json.load(sys.stdin)
st = {c["path"]: c["statistics"] for c in d["row_groups"][0]["columns"]}
a = st["var.typed_value.a.typed_value"]; ca = st["var.typed_value.c.typed_value.a.typed_value"]
assert (a["min"], a["max"]) == (-128, 9223372036854775807), a
assert (ca["min"], ca["max"]) == (-2147483648, 34), ca
' || fail "typed_value statistics"

# 2. floe reads them back as written
"$floe" cat "$tmp/plain"/part-*.parquet > "$tmp/cat_plain.ndjson"
"$floe" cat "$tmp/shred"/part-*.parquet > "$tmp/cat_shred.ndjson"
cmp -s "$tmp/cat_plain.ndjson" "$tmp/cat_shred.ndjson" ||
  fail "floe cat of the shredded file differs: $(diff "$tmp/cat_plain.ndjson" "$tmp/cat_shred.ndjson" | head -5)"
[ "$(wc -l < "$tmp/cat_shred.ndjson")" -eq "$n" ] || fail "row count"
"$floe" cat "$tmp/plain2"/part-*.parquet > "$tmp/cat_plain2.ndjson"
"$floe" cat "$tmp/shred2"/part-*.parquet > "$tmp/cat_shred2.ndjson"
cmp -s "$tmp/cat_plain2.ndjson" "$tmp/cat_shred2.ndjson" ||
  fail "floe cat of the shredded file (2) differs: $(diff "$tmp/cat_plain2.ndjson" "$tmp/cat_shred2.ndjson" | head -5)"
echo "variant_shred_write: floe read back $n + 7 shredded rows as written"

# 3. DuckDB
node "$js/variant_json.mjs" --column var "$tmp/cat_plain.ndjson" "$tmp/shred"/part-*.parquet ||
  fail "DuckDB disagrees"
for c in v2 ev arr; do
  node "$js/variant_json.mjs" --column $c "$tmp/cat_plain2.ndjson" "$tmp/shred2"/part-*.parquet ||
    fail "DuckDB disagrees on $c"
done

# ---- 4. a v3 table
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
shift_ids() { # IN OUT K: ids + K*100000 (floe's lines begin {"id":N)
  node -e '
    const fs = require("fs"), k = Number(process.argv[3]);
    const out = fs.readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l)
      .map((l) => l.replace(/^\{"id":(\d+)/, (m, d) => `{"id":${Number(d) + k * 100000}`));
    fs.writeFileSync(process.argv[2], out.join("\n") + "\n");' "$@"
}
for k in 1 2; do
  shift_ids "$tmp/in.ndjson" "$tmp/in$k.ndjson" $k
  shift_ids "$tmp/cat_plain.ndjson" "$tmp/want$k.ndjson" $k
done
newest() { ls -t $(find "$tmp/wh/ns/ev/data" -name '*.parquet') | head -1; }
"$floe" namespace create ns > /dev/null
"$floe" table create ns.ev --schema "$tmp/schema.json" --property format-version=3 \
  --property "variant.shredding=$spec" > /dev/null
"$floe" append ns.ev "$tmp/in.ndjson" > /dev/null || fail "append"
"$floe" append ns.ev "$tmp/in1.ndjson" > /dev/null || fail "second append"
for f in $(find "$tmp/wh/ns/ev/data" -name '*.parquet'); do
  check_typed "$f" var.typed_value.a.typed_value var.typed_value.c.typed_value.b.typed_value
done
sort "$tmp/cat_plain.ndjson" "$tmp/want1.ndjson" > "$tmp/want.ndjson"
"$floe" scan ns.ev | sort > "$tmp/scan.ndjson"
cmp -s "$tmp/scan.ndjson" "$tmp/want.ndjson" || fail "floe scan differs from floe cat"
sleep 1 # newest() tells the rewrite's file by its time
"$floe" rewrite ns.ev --option min-input-files=2 > "$tmp/rewrite.txt" || fail "rewrite"
grep -q '^rewrote 2 data files' "$tmp/rewrite.txt" || fail "rewrite: $(cat "$tmp/rewrite.txt")"
"$floe" scan ns.ev | sort | cmp -s - "$tmp/want.ndjson" || fail "scan after rewrite"
live=$(newest)
check_typed "$live" var.typed_value.a.typed_value var.typed_value.b.typed_value \
  var.typed_value.c.typed_value.a.typed_value
"$floe" cat --columns id,var "$live" | sort | cmp -s - "$tmp/want.ndjson" || fail "floe cat of the rewritten file"
node "$js/variant_json.mjs" --column var "$tmp/want.ndjson" "$live" ||
  fail "DuckDB disagrees on the rewritten file"
# property unset: the rewrite writes the variant unshredded, values unchanged
"$floe" table properties ns.ev unset variant.shredding > /dev/null || fail "unset"
"$floe" append ns.ev "$tmp/in2.ndjson" > /dev/null || fail "third append"
sleep 1
"$floe" rewrite ns.ev --option min-input-files=2 > "$tmp/rewrite2.txt" || fail "rewrite 2"
grep -q '^rewrote 2 data files' "$tmp/rewrite2.txt" || fail "rewrite 2: $(cat "$tmp/rewrite2.txt")"
sort "$tmp/want.ndjson" "$tmp/want2.ndjson" > "$tmp/want3.ndjson"
"$floe" scan ns.ev | sort | cmp -s - "$tmp/want3.ndjson" || fail "scan after the unshredded rewrite"
grep -q typed_value <<< "$("$floe" inspect --json "$(newest)")" &&
  fail "rewrite with the property unset wrote typed_value"
echo "variant_shred_write: table append, scan and rewrite agree"

# ---- 5. bad specs
for bad in 'var.a' 'var.a:float' 'var..a:long' ':long' 'var.a:long,,var.b:string'; do
  "$floe" table create ns.bad --schema "$tmp/schema.json" --property format-version=3 \
    --property "variant.shredding=$bad" > /dev/null 2>&1 && fail "create took '$bad'"
  rc=0; "$floe" table properties ns.ev set "variant.shredding=$bad" > /dev/null 2> "$tmp/err" || rc=$?
  [ $rc -eq 2 ] && grep -q 'variant.shredding' "$tmp/err" || fail "set '$bad': exit $rc $(cat "$tmp/err")"
  rc=0; "$floe" convert -s "$tmp/schema.json" -o "$tmp/x" --variant-shredding "$bad" \
    "$tmp/in.ndjson" > /dev/null 2>&1 || rc=$?
  [ $rc -eq 2 ] || fail "convert took '$bad' (exit $rc)"
done
before=$("$floe" snapshots ns.ev | wc -l)
for bad in 'nope.a:long' 'id.a:long' 'var.a:long,var.a.b:string' 'var.a:long,var.a:string' \
  'var.a:long,var.A:string' 'var.u.k:long,var.u.K:long'; do
  "$floe" table properties ns.ev set "variant.shredding=$bad" > /dev/null || fail "set '$bad'"
  rc=0; "$floe" append ns.ev "$tmp/in.ndjson" > /dev/null 2> "$tmp/err" || rc=$?
  [ $rc -eq 1 ] && grep -q "variant.shredding: '" "$tmp/err" || fail "append with '$bad': exit $rc $(cat "$tmp/err")"
done
[ "$("$floe" snapshots ns.ev | wc -l)" -eq "$before" ] || fail "a refused append committed"
echo "variant_shred_write: ok"
