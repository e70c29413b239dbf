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
# reads every file), and --stats says how many files the variant statistics skipped.
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

check() { variant_prune_check ns.ev "$@"; } # FILTER FILES-SKIPPED
check "payload.user.country = 'FR'" 2             # B (JP..US), D (no country)
check "payload.user.country = 'US'" 2             # A (DE..FR), D; C has a number
check "payload.user.country < 'E'" 2              # B, D
check "payload.user.country >= 'G'" 2             # A, D
check "payload.user.country != 'FR'" 1            # D only: != holds for other strings
check "payload.user.country LIKE 'J%'" 2          # A, D
check "payload.user.country IS NOT NULL" 1        # D
check "payload.user.country IS NULL" 0
check "payload.n = 5" 2                           # B (100..200), D
check "payload.n > 150" 3                         # A, C, D
check "payload.n <= 10" 2                         # B, D
check "payload.n = 1.0" 1                         # D; not an integer literal: no verdict
check "payload.n = 'five'" 1                      # D; a string against a long column
check "payload.ok = true" 2                       # B, D
check "payload.ok = false" 3                      # A, C, D
check "payload.user.country = 'FR' AND payload.n > 150" 4
check "payload.user.country = 'FR' OR payload.n > 150" 1   # D
check "payload.user.country = 'FR' OR id = 105" 0          # no verdict on id here
check "NOT payload.user.country LIKE 'F%'" 0
check "payload.user.age = 3" 0                    # not shredded
check "payload.other = 1" 0                       # not shredded
[ "$("$floe" scan ns.ev --where "payload.user.country = 'FR'" | wc -l)" -eq 7 ] ||
  fail "country = 'FR' rows"
echo "variant_shred_prune: ok"
