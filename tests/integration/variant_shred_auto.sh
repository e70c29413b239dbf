#!/usr/bin/env bash
# variant_shred_auto.sh - variant.shredding=auto (and convert --variant-shredding auto):
# each Parquet file's writer chooses the paths it shreds from the first rows it is given
# (README "Variant", DESIGN.md "Variant shredding: auto"), and no value is lost or
# changed, whatever the rows that come later.
#
#  1. convert of 20,000 rows (the first ~4 MiB batch, over 10,000 rows, is the sample):
#     the paths chosen are exactly the object paths of at most 4 keys present in at least
#     half the values with one type: a stable string, int32 and int64 integers, doubles, booleans, a field in
#     exactly half the rows, one with variant nulls in a quarter, a string field that
#     turns into a number in the last rows (after the sample); not a field in 49% of the
#     rows, a rare one, one whose type varies, arrays, a key with '.', the empty key, a
#     path of 5 keys;
#  2. a second schema: objects of 100 keys (only the first 32 are shredded) and a list of
#     variants (elements shredded);
#  3. floe cat of the auto-shredded files prints every row byte for byte as the same
#     input converted unshredded; DuckDB (tests/js/variant_json.mjs) reads them to the
#     same JSON;
#  4. a format v3 table with variant.shredding=auto: four appends choose different paths
#     and types (A: country strings DE..FR, B: JP..US, C: no country, D: country a
#     number); floe scan equals floe cat of the input; `--where` on an auto-shredded path
#     skips the files its statistics rule out (files_skipped_variant) and prints the rows
#     of --no-prune; floe rewrite into one auto-shredded file keeps every row;
#  5. 'auto' with named paths is refused (convert: usage error; properties set: exit 2).
#  6. on a (v2) table without a variant column floe rewrite copies row groups as stored.
# Fails on the binary before auto (convert refuses 'auto' as a path without a type).
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && command -v python3 >/dev/null &&
  [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "variant_shred_auto: node, python3 and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/variant_prune.sh"
fail() { echo "variant_shred_auto: FAIL: $*" >&2; exit 1; }

# shredded FILE COLUMN: the shredded paths of variant COLUMN, "key.key:type" a line, sorted
shredded() {
  "$floe" inspect --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
types = {"INT32": "int", "INT64": "long", "DOUBLE": "double", "BOOLEAN": "boolean",
         "BYTE_ARRAY": "string", "BYTE_ARRAY STRING": "string"}
def find(node, names):
    if not names: return node
    for c in node.get("children", []):
        if c["name"] == names[0]: return find(c, names[1:])
    sys.exit("no " + names[0])
out = []
def walk(typed, path):
    if "children" not in typed:
        out.append(".".join(path) + ":" + types.get(typed["type"], typed["type"]))
        return
    for g in typed["children"]:
        kids = {c["name"]: c for c in g["children"]}
        walk(kids["typed_value"], path + [g["name"]])
v = find(d["schema"], sys.argv[1].split("."))
for c in v.get("children", []):
    if c["name"] == "typed_value": walk(c, [])
print("\n".join(sorted(out)))
' "$2"
}

# ---- 1. the corpus: 20,000 rows of ~280 bytes (5.6 MB)
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
with open(f"{d}/in.ndjson", "w") as f:
    n = 20000
    for i in range(n):
        if i % 1000 == 501:
            p = '"not an object %d"' % i if i % 2000 == 501 else "[1,{\"a\":2}]"
        else:
            o = {"country": ["DE", "ES", "FR"][i % 3], "n": i % 1000, "big": i * 10**9,
                 "flag": i % 2 == 0, "nullish": None if i % 4 == 0 else "v%d" % (i % 7),
                 "late": "s%d" % (i % 5) if i < n - 10 else i,
                 "user": {"age": i % 90, "tags": ["a", i], "deep": {"x": {"y": i}},
                          "deep5": {"x": {"y": {"z": i}}}},
                 "a.b": i, "": i, "arr": [i, i + 1],
                 "mix": i if i % 3 else "three"}
            if i % 2 == 0: o["half"] = "h"
            if i % 100 < 49: o["under"] = i
            if i % 10 == 0: o["rare"] = True
            p = json.dumps(o, separators=(",", ":"))
            p = p[:-1] + ',"ratio":%de-2}' % i   # an exponent: a variant double
        f.write('{"id":%d,"payload":%s}\n' % (i, p))
with open(f"{d}/in2.ndjson", "w") as f:
    for i in range(200):
        wide = {"k%03d" % k: i * k for k in range(100)}
        ev = [{"t": "click", "x": i}, {"t": "view", "x": -i}] if i % 5 else [None, 3]
        f.write(json.dumps({"id": i, "wide": wide, "events": ev}) + "\n")
PY
cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"payload","required":false,"type":"variant"}]}
JSON
cat > "$tmp/schema2.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"wide","required":false,"type":"variant"},
 {"id":3,"name":"events","required":false,"type":{"type":"list","element-id":4,
   "element-required":false,"element":"variant"}}]}
JSON
"$floe" convert -s "$tmp/schema.json" -o "$tmp/plain" "$tmp/in.ndjson" > /dev/null ||
  fail "convert"
"$floe" convert -s "$tmp/schema.json" -o "$tmp/auto" --variant-shredding auto \
  "$tmp/in.ndjson" > /dev/null || fail "convert --variant-shredding auto"
"$floe" convert -s "$tmp/schema2.json" -o "$tmp/plain2" "$tmp/in2.ndjson" > /dev/null ||
  fail "convert (2)"
"$floe" convert -s "$tmp/schema2.json" -o "$tmp/auto2" --variant-shredding ' auto ' \
  "$tmp/in2.ndjson" > /dev/null || fail "convert --variant-shredding auto (2)"
[ "$(ls "$tmp/auto"/*.parquet | wc -l)" -eq 1 ] || fail "expected one file"

cat > "$tmp/want_paths" <<'EOF'
big:long
country:string
flag:boolean
half:string
late:string
n:int
nullish:string
ratio:double
user.age:int
user.deep.x.y:int
EOF
shredded "$tmp/auto/part-00000.parquet" payload > "$tmp/paths"
cmp -s "$tmp/paths" "$tmp/want_paths" ||
  fail "paths chosen: $(diff "$tmp/want_paths" "$tmp/paths" | tr '\n' ' ')"
# the typed columns carry the values and their bounds
"$floe" inspect --json "$tmp/auto/part-00000.parquet" | python3 -c '
import json, sys
d = json.load(sys.stdin)
cols = {}
for g in d["row_groups"]:
    for c in g["columns"]:
        cols.setdefault(c["path"], []).append(c)
def st(p): return [c["statistics"] for c in cols["payload.typed_value." + p]]
n = st("n.typed_value")
assert min(s["min"] for s in n) == 0 and max(s["max"] for s in n) == 999, n
c = st("country.typed_value")
assert min(s["min"] for s in c) == "DE" and max(s["max"] for s in c) == "FR", c
# the 10 late numbers are in late.value
lv = cols["payload.typed_value.late.value"]
assert sum(c["num_values"] - c["statistics"]["null_count"] for c in lv) == 10, lv
' || fail "typed_value statistics"
shredded "$tmp/auto2/part-00000.parquet" wide > "$tmp/paths2"
[ "$(wc -l < "$tmp/paths2")" -eq 32 ] || fail "wide: $(wc -l < "$tmp/paths2") paths, expected 32"
python3 -c 'print("\n".join("k%03d:int" % k for k in range(32)))' |
  cmp -s - "$tmp/paths2" || fail "wide: paths $(head -3 "$tmp/paths2" | tr '\n' ' ')..."
shredded "$tmp/auto2/part-00000.parquet" events.list.element > "$tmp/paths3"
printf 't:string\nx:int\n' | cmp -s - "$tmp/paths3" ||
  fail "events: paths $(tr '\n' ' ' < "$tmp/paths3")"
echo "variant_shred_auto: paths chosen as the rule says"

# ---- 3. every row back, byte for byte (floe), as JSON (DuckDB)
"$floe" cat "$tmp/plain"/*.parquet > "$tmp/cat_plain.ndjson"
"$floe" cat "$tmp/auto"/*.parquet > "$tmp/cat_auto.ndjson"
[ "$(wc -l < "$tmp/cat_auto.ndjson")" -eq 20000 ] || fail "row count"
cmp -s "$tmp/cat_plain.ndjson" "$tmp/cat_auto.ndjson" ||
  fail "floe cat of the auto-shredded file differs: $(diff "$tmp/cat_plain.ndjson" "$tmp/cat_auto.ndjson" | head -4)"
tail -1 "$tmp/cat_auto.ndjson" | grep -q '"late":19999,' || fail "late number: $(tail -1 "$tmp/cat_auto.ndjson")"
"$floe" cat "$tmp/plain2"/*.parquet > "$tmp/cat_plain2.ndjson"
"$floe" cat "$tmp/auto2"/*.parquet > "$tmp/cat_auto2.ndjson"
cmp -s "$tmp/cat_plain2.ndjson" "$tmp/cat_auto2.ndjson" ||
  fail "floe cat of the auto-shredded file (2) differs: $(diff "$tmp/cat_plain2.ndjson" "$tmp/cat_auto2.ndjson" | head -4)"
node "$js/variant_json.mjs" --column payload "$tmp/cat_plain.ndjson" "$tmp/auto"/*.parquet ||
  fail "DuckDB disagrees"
for c in wide events; do
  node "$js/variant_json.mjs" --column $c "$tmp/cat_plain2.ndjson" "$tmp/auto2"/*.parquet ||
    fail "DuckDB disagrees on $c"
done

# ---- 4. a v3 table
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
python3 - "$tmp" <<'PY'
import json, sys
def write(name, rows):  # one file of the table's appends
    text = "".join(json.dumps(r) + "\n" for r in rows)
    open(f"{sys.argv[1]}/{name}.ndjson", "w").write(text)
write("a", [{"id": i, "payload": {"user": {"country": ["DE", "ES", "FR"][i % 3]}, "n": i,
                                   "ok": True}} if i != 1 else {"id": 1, "payload": {"rare": 1}}
            for i in range(1, 11)])
write("b", [{"id": 100 + i, "payload": {"user": {"country": ["JP", "US"][i % 2]},
                                         "n": 100 + 10 * i, "ok": False}} for i in range(11)])
write("c", [{"id": 200 + i, "payload": {"other": i, "n": "text"}} for i in range(6)])
write("d", [{"id": 300 + i, "payload": {"user": {"country": 33}, "n": 5 + i}} for i in range(4)])
PY
"$floe" namespace create ns > /dev/null
"$floe" table create ns.ev --schema "$tmp/schema.json" --property format-version=3 \
  --property 'variant.shredding=auto' > /dev/null
for f in a b c d; do
  "$floe" append ns.ev "$tmp/$f.ndjson" > /dev/null || fail "append $f"
  file=$(ls -t $(find "$tmp/wh/ns/ev/data" -name '*.parquet') | head -1)
  shredded "$file" payload | tr '\n' ' ' > "$tmp/paths_$f"
  sleep 1 # the next file is told by its time
done
[ "$(cat "$tmp/paths_a")" = "n:int ok:boolean user.country:string " ] || fail "a: $(cat "$tmp/paths_a")"
[ "$(cat "$tmp/paths_b")" = "n:int ok:boolean user.country:string " ] || fail "b: $(cat "$tmp/paths_b")"
[ "$(cat "$tmp/paths_c")" = "n:string other:int " ] || fail "c: $(cat "$tmp/paths_c")"
[ "$(cat "$tmp/paths_d")" = "n:int user.country:int " ] || fail "d: $(cat "$tmp/paths_d")"
for f in a b c d; do "$floe" convert -s "$tmp/schema.json" -o "$tmp/t_$f" "$tmp/$f.ndjson" > /dev/null; done
for f in "$tmp"/t_?/*.parquet; do "$floe" cat "$f"; done | sort > "$tmp/want.ndjson"
"$floe" scan ns.ev | sort > "$tmp/scan.ndjson"
cmp -s "$tmp/scan.ndjson" "$tmp/want.ndjson" || fail "floe scan differs from floe cat"

check() { variant_prune_check ns.ev "$@"; } # FILTER FILES-SKIPPED
check "payload.user.country = 'FR'" 1       # B (JP..US); C does not shred it, D's is an int
check "payload.user.country = 'US'" 1       # A
check "payload.user.country >= 'G'" 1       # A
check "payload.n > 150" 2                   # A (1..10), D (5..8); C's n is a string
check "payload.n = 7" 1                     # B (100..200)
check "payload.ok = true" 1                 # B
check "payload.rare = 3" 0                  # never shredded
check "payload.other = 1" 0                 # shredded in C only, as an int: no verdict elsewhere
check "payload.user.country = 'FR' AND payload.n > 150" 3   # A, B, D
[ "$("$floe" scan ns.ev --where "payload.user.country = 'FR'" | wc -l)" -eq 3 ] ||
  fail "country = 'FR' rows"
"$floe" rewrite ns.ev --option min-input-files=2 > "$tmp/rewrite.txt" || fail "rewrite"
grep -q '^rewrote 4 data files' "$tmp/rewrite.txt" || fail "rewrite: $(cat "$tmp/rewrite.txt")"
"$floe" scan ns.ev | sort | cmp -s - "$tmp/want.ndjson" || fail "scan after rewrite"
live=$(find "$tmp/wh/ns/ev/data" -name '*.parquet' -newer "$tmp/paths_d" | head -1)
[ -n "$live" ] || fail "no rewritten file"
shredded "$live" payload | tr '\n' ' ' > "$tmp/paths_r"
# over all 31 rows: country and n change type between files, ok is boolean in 20
[ "$(cat "$tmp/paths_r")" = "ok:boolean " ] || fail "rewrite: $(cat "$tmp/paths_r")"
node "$js/variant_json.mjs" --column payload "$tmp/want.ndjson" "$live" ||
  fail "DuckDB disagrees on the rewritten file"
check "payload.user.country = 'FR'" 0
echo "variant_shred_auto: table append, scan, --where and rewrite agree"

# ---- 5. auto is alone
for bad in 'auto,payload.n:long' 'payload.n:long, auto'; do
  rc=0; "$floe" table properties ns.ev set "variant.shredding=$bad" > /dev/null 2> "$tmp/err" || rc=$?
  [ $rc -eq 2 ] && grep -q "'auto'" "$tmp/err" || fail "set '$bad': exit $rc $(cat "$tmp/err")"
  rc=0; "$floe" convert -s "$tmp/schema.json" -o "$tmp/x" --variant-shredding "$bad" \
    "$tmp/a.ndjson" > /dev/null 2> "$tmp/err" || rc=$?
  [ $rc -eq 2 ] && grep -q "'auto'" "$tmp/err" || fail "convert took '$bad' (exit $rc)"
done

# ---- 6. on a table without a variant column the property changes nothing: floe rewrite
# still copies row groups as stored (it turned copying off whenever the property was set)
printf '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}' \
  > "$tmp/plain.json"
"$floe" table create ns.plain --schema "$tmp/plain.json" --property format-version=2 \
  --property 'variant.shredding=auto' > /dev/null
for i in 1 2; do
  printf '{"id":%d}\n' "$i" > "$tmp/p$i.ndjson"
  "$floe" append ns.plain "$tmp/p$i.ndjson" > /dev/null || fail "append p$i"
done
"$floe" rewrite ns.plain -o rewrite-all=true -o fast-copy=true > "$tmp/rw_plain.txt" ||
  fail "rewrite ns.plain"
grep -q '^row groups: 2 copied as stored, 0 re-encoded' "$tmp/rw_plain.txt" ||
  fail "rewrite of a table without a variant: $(cat "$tmp/rw_plain.txt")"
[ "$("$floe" scan ns.plain | sort | tr -d '\n')" = '{"id":1}{"id":2}' ] ||
  fail "ns.plain after rewrite: $("$floe" scan ns.plain)"
# ---- 7. a key holding a NUL is never shredded (a NUL would end the shredded field's name:
# "a\u0000b" beside "a" made two fields named "a" and the whole file was refused); the
# record is kept whole and read back byte for byte, as without shredding
printf '{"id":1,"payload":{"a\\u0000b":100,"a":1}}\n{"id":2,"payload":{"a\\u0000b":7,"a":2}}\n' \
  > "$tmp/nul.ndjson"
"$floe" convert -s "$tmp/schema.json" -o "$tmp/nul_plain" "$tmp/nul.ndjson" > /dev/null ||
  fail "convert of NUL keys"
"$floe" convert -s "$tmp/schema.json" -o "$tmp/nul_auto" --variant-shredding auto \
  "$tmp/nul.ndjson" > /dev/null 2> "$tmp/err" || fail "auto refused NUL keys: $(cat "$tmp/err")"
[ "$("$floe" cat "$tmp/nul_auto"/*.parquet)" = "$("$floe" cat "$tmp/nul_plain"/*.parquet)" ] ||
  fail "NUL keys read back: $("$floe" cat "$tmp/nul_auto"/*.parquet)"
[ "$(shredded "$tmp/nul_auto/part-00000.parquet" payload)" = "a:int" ] ||
  fail "NUL keys: paths $(shredded "$tmp/nul_auto/part-00000.parquet" payload | tr '\n' ' ')"
# ---- 8. keys equal but for ASCII case in one object ("A" and "a", "B" and "b", nested
# "u.K" and "u.k"): one of each pair is shredded, never both (DuckDB's struct field names
# ignore case: it read the second as "a_1"), and DuckDB reads every row as floe does
python3 - "$tmp/case.ndjson" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(40):
        f.write(json.dumps({"id": i, "payload": {"A": {"x": i}, "a": i * 2, "B": i % 3 == 0,
                            "b": "s%d" % i, "u": {"K": i, "k": -i}, "c": i}}) + "\n")
PY
"$floe" convert -s "$tmp/schema.json" -o "$tmp/case" --variant-shredding auto \
  "$tmp/case.ndjson" > /dev/null || fail "convert of case-clashing keys"
shredded "$tmp/case/part-00000.parquet" payload > "$tmp/case_paths"
python3 - "$tmp/case_paths" <<'PY' || fail "case-clashing keys both shredded: $(tr '\n' ' ' < "$tmp/case_paths")"
import sys
paths = [l.split(":")[0] for l in open(sys.argv[1]) if l.strip()]
assert "c" in paths, paths
seen = {}
for p in paths:
    keys = p.split(".")
    for d in range(len(keys)):
        parent, k = tuple(keys[:d]), keys[d]
        other = seen.setdefault((parent, k.lower()), k)
        assert other == k, (p, other)
PY
"$floe" cat "$tmp/case/part-00000.parquet" | python3 -c '
import json, sys
want = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in sys.stdin]
assert got == want, "floe cat differs"' "$tmp/case.ndjson" || fail "floe cat of case-clashing keys"
node "$js/variant_json.mjs" --column payload "$tmp/case.ndjson" "$tmp/case/part-00000.parquet" ||
  fail "DuckDB disagrees on case-clashing keys"
echo "variant_shred_auto: ok"
