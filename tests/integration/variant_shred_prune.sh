#!/usr/bin/env bash
# variant_shred_prune.sh - floe scan skips data files by the statistics of shredded
# variant columns (VariantShredding.md "Data Skipping"), and the rows are those of the
# scan that reads everything.
#
# A format v3 table shreds payload.user.country (string), payload.n (long) and
# payload.ok (boolean); four appends make four files:
#   A: countries DE..FR, n 1..10, ok true      B: countries JP..US, n 100..200, ok false
#   C: like A but one country is a number (its value column is not all null: C is never
#      skipped on country)                      D: no user, no n, no ok in any row
# For each filter, `floe scan --where` prints the same rows as with --no-prune (which
# reads every file), and --stats says how many files the variant pruning skipped in all
# and how many of them the manifest's variant bounds skipped (files_skipped_metrics),
# before any footer was read.
# Then the manifest bounds themselves (decoded by tests/js/variant_bounds_oracle.mjs,
# against what the input files call for), and a second table (ns.ev2) for truncated,
# multibyte and boundary values, mixed types, a file written without shredding and a
# path whose bound is of another type in some files: a few exact skip counts, then ~90
# more filters whose pruned rows must be the unpruned ones.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "variant_shred_prune: python3 needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib/variant_prune.sh"
fail() { echo "variant_shred_prune: FAIL: $*" >&2; exit 1; }

export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"payload","required":false,"type":"variant"}]}
JSON
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def write(name, rows):
    with open(f"{d}/{name}.ndjson", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
write("a", [{"id": i, "payload": {"user": {"country": ["DE", "ES", "FR"][i % 3], "age": i},
                                   "n": i, "ok": True, "extra": [i]}} for i in range(1, 11)])
write("b", [{"id": 100 + i, "payload": {"user": {"country": ["JP", "US"][i % 2]},
                                         "n": 100 + 10 * i, "ok": False}} for i in range(11)])
write("c", [{"id": 200 + i, "payload": {"user": {"country": 7 if i == 3 else "FR"}, "n": i,
                                         "ok": True}} for i in range(1, 6)])
write("d", [{"id": 300 + i, "payload": {"other": i} if i % 2 else None} for i in range(6)])
PY
"$floe" namespace create ns > /dev/null
"$floe" table create ns.ev --schema "$tmp/schema.json" --property format-version=3 \
  --property 'variant.shredding=payload.user.country:string,payload.n:long,payload.ok:boolean' \
  > /dev/null
for f in a b c d; do "$floe" append ns.ev "$tmp/$f.ndjson" > /dev/null || fail "append $f"; done

check() { variant_prune_check ns.ev "$@"; } # FILTER FILES-SKIPPED BY-MANIFEST-BOUNDS
check "payload.user.country = 'FR'" 2 1           # B (JP..US) by its bounds, D (no country)
check "payload.user.country = 'US'" 2 1           # A, D; C has a number: no bound
check "payload.user.country < 'E'" 2 1            # B, D
check "payload.user.country >= 'G'" 2 1           # A, D
check "payload.user.country != 'FR'" 1 0          # D only: != holds for other strings
check "payload.user.country LIKE 'J%'" 2 1        # A, D
check "payload.user.country IS NOT NULL" 1 0      # D
check "payload.user.country IS NULL" 0 0
check "payload.n = 5" 2 1                         # B (100..200), D
check "payload.n > 150" 3 2                       # A, C, D
check "payload.n <= 10" 2 1                       # B, D
check "payload.n = 1.0" 1 0                       # D; not an integer literal: no verdict
check "payload.n = 'five'" 1 0                    # D; a string against a long column
check "payload.ok = true" 2 1                     # B, D
check "payload.ok = false" 3 2                    # A, C, D
check "payload.user.country = 'FR' AND payload.n > 150" 4 3
check "payload.user.country = 'FR' OR payload.n > 150" 1 0  # D
check "payload.user.country = 'FR' OR id = 105" 0 0         # no verdict on id here
check "payload.user.country IN ('JP', 'XX')" 2 1  # A, D
check "NOT payload.user.country LIKE 'F%'" 0 0
check "payload.user.age = 3" 0 0                  # not shredded
check "payload.other = 1" 0 0                     # not shredded
[ "$("$floe" scan ns.ev --where "payload.user.country = 'FR'" | wc -l)" -eq 7 ] ||
  fail "country = 'FR' rows"

# ---- manifest bounds of the variant (format/spec.md "Bounds for Variant") ----------------
# Decoded by tests/js/variant_bounds_oracle.mjs (avsc, the variant read from the spec) and
# compared with what the input files call for (python below): per file, a path has bounds
# when all its values are of the shredded type (no JSON null, no other type) and there is
# at least one; strings truncated to 16 code points, the upper bound incremented.
js=$src/tests/js
have_js=1
command -v node >/dev/null && [ -d "$js/node_modules/avsc" ] || have_js=0
meta_of() { "$floe" table describe "$1" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))'; }
expect_bounds() { # EXPECT-FILE SPEC NDJSON... : the bound lines the inputs call for
  python3 - "$@" <<'PY'
import json, sys
out, spec, files = sys.argv[1], sys.argv[2], sys.argv[3:]
kinds = {"string": "string", "long": "int64", "int": "int32", "boolean": "boolean", "double": "double"}
def norm(keys):
    def esc(k):
        r = ""
        for ch in k:
            if ch in "'\\": r += "\\" + ch
            elif ch in "\b\f\n\r\t": r += {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch]
            elif ord(ch) < 0x20: r += "\\u%04x" % ord(ch)
            else: r += ch
        return r
    return "$" + "".join("['%s']" % esc(k) for k in keys)
def fits(t, v):
    if t == "string": return isinstance(v, str)
    if t == "boolean": return isinstance(v, bool)
    if t in ("long", "int"):
        lim = 2**63 if t == "long" else 2**31
        return isinstance(v, int) and not isinstance(v, bool) and -lim <= v < lim
    if t == "double": return isinstance(v, float)
def trunc(s, upper):
    if len(s) <= 16: return s
    return s[:15] + chr(ord(s[15]) + 1) if upper else s[:16]
lines = []
for f in files:
    rows = [json.loads(l) for l in open(f)]
    bounds = {"lower": {}, "upper": {}}
    for entry in spec.split(","):
        path, t = entry.rsplit(":", 1)
        keys = path.split(".")[1:]
        vals, ok = [], True
        for r in rows:
            v = r.get("payload")
            for k in keys:
                v = v.get(k, Ellipsis) if isinstance(v, dict) else Ellipsis
            if v is Ellipsis: continue
            if not fits(t, v): ok = False
            vals.append(v)
        if not ok or not vals: continue
        lo, hi = min(vals), max(vals)
        if t == "string": lo, hi = trunc(lo, False), trunc(hi, True)
        if t in ("long", "int"): lo, hi = str(lo), str(hi)
        bounds["lower"][norm(keys)] = [kinds[t], lo]
        bounds["upper"][norm(keys)] = [kinds[t], hi]
    for side in ("lower", "upper"):
        b = dict(sorted(bounds[side].items(), key=lambda kv: kv[0].encode()))
        lines.append("%d %s %s" % (len(rows), side, json.dumps(b, separators=(",", ":"), ensure_ascii=False) if b else "none"))
open(out, "w").write("\n".join(sorted(lines)) + "\n")
PY
}
check_bounds() { # TABLE FIELD-ID SPEC NDJSON...
  local table=$1 id=$2 spec=$3
  shift 3
  [ "$have_js" = 1 ] || { echo "  (node or tests/js/node_modules missing: manifest bytes not decoded)"; return 0; }
  local meta
  meta=$(meta_of "$table")
  (cd "$js" && node variant_bounds_oracle.mjs "$meta" "$id") > "$tmp/got.raw" ||
    fail "$table: the variant bounds do not decode"
  sort "$tmp/got.raw" > "$tmp/got"
  expect_bounds "$tmp/want" "$spec" "$@"
  cmp -s "$tmp/got" "$tmp/want" ||
    fail "$table manifest bounds: $(diff "$tmp/got" "$tmp/want" | head -12)"
  echo "  $table: manifest bounds of $(grep -vc ' none$' "$tmp/got") file sides as the inputs call for"
}
check_bounds ns.ev 2 'payload.user.country:string,payload.n:long,payload.ok:boolean' \
  "$tmp/a.ndjson" "$tmp/b.ndjson" "$tmp/c.ndjson" "$tmp/d.ndjson"

# ns.ev2: long and multibyte strings (truncated bounds), int32 / int64 / boolean paths
# at both ends, a path two objects deep, a key that needs escaping, mixed types (a
# number among strings, a JSON null among ints, an int past int32 in an int column), a
# file written before the table shredded anything (no bounds: never skipped), and a path
# shredded as long in some files and as string in others (a bound of the other type
# than the literal: never skipped).
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def write(name, rows):
    with open(f"{d}/{name}.ndjson", "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
# G (7 rows): written unshredded
write("g", [{"id": 1000 + i, "payload": {"s": "zzz-unshredded-%03d" % i, "i": 500 + i, "k": 5,
                                           "b": True, "d": 0.5, "q'x": "g"}} for i in range(7)])
# E (8 rows): 26-character strings, negative ints
write("e", [{"id": 2000 + i, "payload": {"s": "prefix-common-abcdefgh-%03d" % (10 + i),
                                           "i": -5 + i, "k": 1 + i, "b": False, "d": 1.5 * (i + 1),
                                           "deep": {"a": {"b": "deep-%d" % i}}, "q'x": "e%d" % i}}
            for i in range(8)])
# F (9 rows): s has a number among strings, i a JSON null among ints, k fine
write("f", [{"id": 3000 + i, "payload": {"s": 42 if i == 4 else "m%d" % i,
                                           "i": None if i == 2 else i, "k": 100 + i, "b": True,
                                           "d": -2.25 * i - 1}} for i in range(9)])
# H (12 rows): multibyte strings past 16 code points, ints near the int32 edge, one past it
# in the int column (H's i has no bound), negative longs
write("h", [{"id": 4000 + i, "payload": {"s": "ééééééééééééééé%s-%02d" % ("é" if i % 2 else "ê", i),
                                           "i": 2147483640 + i, "k": -1000 + i, "b": i % 2 == 0,
                                           "deep": {"a": {"b": "deep-h%d" % i}}}} for i in range(12)])
# X (13 rows): appended after k became a string path
write("x", [{"id": 5000 + i, "payload": {"s": chr(ord("a") + i), "i": 20 + i,
                                           "k": "k-%s" % chr(ord("a") + i)}} for i in range(13)])
PY
"$floe" table create ns.ev2 --schema "$tmp/schema.json" --property format-version=3 > /dev/null
"$floe" append ns.ev2 "$tmp/g.ndjson" > /dev/null || fail "append g"
spec2="payload.s:string,payload.i:int,payload.k:long,payload.b:boolean,payload.deep.a.b:string,payload.q'x:string"
"$floe" table properties ns.ev2 set "variant.shredding=$spec2" > /dev/null || fail "set shredding"
for f in e f h; do "$floe" append ns.ev2 "$tmp/$f.ndjson" > /dev/null || fail "append $f"; done
spec3=${spec2/payload.k:long/payload.k:string}
"$floe" table properties ns.ev2 set "variant.shredding=$spec3" > /dev/null || fail "set shredding 2"
"$floe" append ns.ev2 "$tmp/x.ndjson" > /dev/null || fail "append x"
# (each file against the spec it was written with: G none, X with k a string)
if [ "$have_js" = 1 ]; then
  meta=$(meta_of ns.ev2)
  (cd "$js" && node variant_bounds_oracle.mjs "$meta" 2) | sort > "$tmp/got" ||
    fail "ns.ev2: the variant bounds do not decode"
  expect_bounds "$tmp/w1" "$spec2" "$tmp/e.ndjson" "$tmp/f.ndjson" "$tmp/h.ndjson"
  expect_bounds "$tmp/w2" "$spec3" "$tmp/x.ndjson"
  printf '7 lower none\n7 upper none\n' | cat - "$tmp/w1" "$tmp/w2" | sort > "$tmp/want"
  cmp -s "$tmp/got" "$tmp/want" ||
    fail "ns.ev2 manifest bounds: $(diff "$tmp/got" "$tmp/want" | head -12)"
  echo "  ns.ev2: manifest bounds as the inputs call for ($(grep -vc ' none$' "$tmp/got") file sides)"
fi

# G: no bounds; E: s "prefix-common-ab".."prefix-common-ac" (truncated), i -5..2, k 1..8,
# b false; F: no s or i bound, k 100..108; H: s 16 x é .. 15 x é + ë (truncated), no i
# bound, k -1000..-989; X: k a string (k-a..k-m), s a..m, i 20..32, no b or deep.
check() { variant_prune_check ns.ev2 "$@"; } # FILTER FILES-SKIPPED BY-MANIFEST-BOUNDS
check "payload.s = 'prefix-common-abcdefgh-012'" 2 2  # H, X
check "payload.s > 'prefix-common-ac'" 2 2            # E (its upper bound), X
check "payload.i = 2147483647" 2 2                    # E, X; H's i has an int past int32
check "payload.k = 5" 2 2                             # F, H; X's k bound is a string
check "payload.k = 'k-c'" 0 0                         # E, F, H: integer bounds, no verdict
check "payload.b = true" 2 1                          # E; X has no b (footer)
check "payload.deep.a.b = 'deep-3'" 3 1               # H; F and X have none (footer)
# every other filter: the pruned rows are the unpruned ones
n=0 skipped=0
for w in \
  "payload.s = 'prefix-common-abcdefgh-010'" "payload.s = 'prefix-common-abcdefgh-017'" \
  "payload.s = 'prefix-common-abcdefgh-009'" "payload.s = 'prefix-common-abcdefgh-018'" \
  "payload.s = 'prefix-common-ab'" "payload.s = 'prefix-common-ac'" \
  "payload.s >= 'prefix-common-ac'" "payload.s < 'prefix-common-ab'" \
  "payload.s <= 'prefix-common-ab'" "payload.s < 'prefix-common-abcdefgh-010'" \
  "payload.s > 'prefix-common-abcdefgh-017'" "payload.s LIKE 'prefix-common-abcdefgh-01%'" \
  "payload.s LIKE 'prefix-common-ac%'" "payload.s LIKE 'zzz%'" \
  "payload.s = 'zzz-unshredded-003'" "payload.s > 'z'" "payload.s = 'm3'" "payload.s = 42" \
  "payload.s != 'm3'" "payload.s IN ('a', 'm1', 'zzz-unshredded-000')" \
  "payload.s >= 'éééééééééééééééé'" "payload.s > 'ééééééééééééééêë'" \
  "payload.s < 'éééééééééééééééé'" "payload.s = 'éééééééééééééééé-01'" \
  "payload.s = 'ééééééééééééééêê-00'" "payload.s LIKE 'ééééééééééééééé%'" \
  "payload.s >= 'ééééééééééééééééë'" "payload.s = 'ééééééééééééééééë'" \
  "payload.i = -5" "payload.i = 2" "payload.i = -6" "payload.i = 3" "payload.i < -5" \
  "payload.i <= -5" "payload.i > 2" "payload.i >= 2" "payload.i = 2147483651" \
  "payload.i > 2147483647" "payload.i = 500" "payload.i = 503" "payload.i IS NULL" \
  "payload.i = 20" "payload.i > 31" "payload.i >= 32" "payload.i != 0" "payload.i = 1" \
  "payload.i IN (-5, 32, 2147483645)" "payload.i = -9223372036854775808" \
  "payload.k = 1" "payload.k = 8" "payload.k = 9" "payload.k = 0" "payload.k > 'k-l'" \
  "payload.k < -999" "payload.k <= -1000" "payload.k < -1000" "payload.k = -989" \
  "payload.k >= 108" "payload.k > 108" "payload.k LIKE 'k-%'" "payload.k = 'k-m'" \
  "payload.b = true" "payload.b = false" "payload.b != true" "payload.b != false" \
  "payload.d = 1.5" "payload.d > 100" "payload.d < -19" "payload.d = 12" \
  "payload.deep.a.b = 'deep-h11'" "payload.deep.a.b > 'deep-h'" "payload.deep.a.b < 'deep-0'" \
  "payload.deep.a.b >= 'deep-h9'" "payload.deep.a = 'x'" "payload.deep IS NOT NULL" \
  "NOT payload.i < 0" "NOT payload.s >= 'prefix'" "NOT payload.k = 5" "NOT payload.k > 'k-c'" \
  "payload.s = 'prefix-common-abcdefgh-012' AND payload.i = -3" \
  "payload.k = 101 OR payload.s = 'c'" "payload.i = 2 OR payload.k = -990" \
  ; do
  "$floe" scan ns.ev2 --where "$w" --stats 2> "$tmp/stats" | sort > "$tmp/pruned" ||
    fail "scan --where \"$w\": $(cat "$tmp/stats")"
  "$floe" scan ns.ev2 --where "$w" --no-prune | sort > "$tmp/all" ||
    fail "scan --no-prune --where \"$w\""
  cmp -s "$tmp/pruned" "$tmp/all" ||
    fail "\"$w\": pruned and unpruned scans differ: $(diff "$tmp/pruned" "$tmp/all" | head -4)"
  m=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["files_skipped_metrics"])' "$tmp/stats")
  n=$((n + 1)) skipped=$((skipped + m))
done
echo "  ns.ev2: $n more filters, pruned rows = unpruned rows; $skipped files skipped by manifest bounds"
[ "$skipped" -ge 115 ] || fail "ns.ev2: only $skipped files skipped by manifest bounds over $n filters"
echo "variant_shred_prune: ok"
