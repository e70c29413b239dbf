#!/usr/bin/env bash
# variant_shredded_append.sh - Parquet files whose variant column another writer shredded
# (the shredded_variant conformance files: typed_value primitives, objects, arrays, partly
# shredded objects) appended to a format v3 table as they are, scanned, and compacted.
#  1. floe append takes every case file floe reads; floe scan prints, row for row, what
#     floe cat prints for the files (the reconstruction of VariantShredding.md);
#  2. a case file whose variant floe cannot read (a value conflicting with its
#     typed_value, a shredded field over a non-object, a field group that is not
#     required) is refused naming the column, and nothing is committed;
#  3. floe rewrite compacts the shredded files into one unshredded file (metadata and the
#     value put back together) and the scan is unchanged; so is a rewrite with deletes.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
conf=${FLOE_CONFORMANCE:-$src/../shared/conformance}
sv=$conf/parquet-testing/shredded_variant
[ -d "$sv" ] || { echo "variant_shredded_append: $sv missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "variant_shredded_append: FAIL: $*" >&2; exit 1; }

export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"var","required":false,"type":"variant"}]}
JSON
"$floe" namespace create ns > /dev/null
"$floe" table create ns.ev --schema "$tmp/schema.json" --property format-version=3 > /dev/null

# 1. every readable case file is appended; the scan is what floe cat reads
nfiles=0 nshred=0
: > "$tmp/cat.ndjson"
for f in "$sv"/case-*.parquet; do
  "$floe" cat "$f" > "$tmp/one.ndjson" 2>/dev/null || continue
  cat "$tmp/one.ndjson" >> "$tmp/cat.ndjson"
  "$floe" append ns.ev "$f" > "$tmp/append.txt" 2>&1 ||
    fail "append $(basename "$f"): $(cat "$tmp/append.txt")"
  nfiles=$((nfiles + 1))
  grep -q typed_value <<< "$("$floe" inspect "$f")" && nshred=$((nshred + 1))
done
[ "$nfiles" -ge 100 ] || fail "only $nfiles case files read"
[ "$nshred" -ge 70 ] || fail "only $nshred shredded case files"
"$floe" scan ns.ev | sort > "$tmp/scan.ndjson" || fail "scan"
sort "$tmp/cat.ndjson" | cmp -s - "$tmp/scan.ndjson" ||
  fail "scan differs from floe cat: $(sort "$tmp/cat.ndjson" | diff - "$tmp/scan.ndjson" | head -5)"
nrows=$(wc -l < "$tmp/scan.ndjson")
echo "variant_shredded_append: appended $nfiles files ($nshred shredded), $nrows rows scan as floe cat reads them"

# 2. unreadable variants are refused at append, naming the column
snap=$("$floe" table describe ns.ev | md5sum)
for c in "case-040.parquet:conflicting value and typed_value" \
         "case-042.parquet:conflicting value and typed_value" \
         "case-128.parquet:non-object value with shredded fields" \
         "case-084-INVALID.parquet:must be a required group"; do
  f=${c%%:*} why=${c#*:}
  [ -f "$sv/$f" ] || fail "$f missing"
  if "$floe" append ns.ev "$sv/$f" > "$tmp/bad.txt" 2>&1; then fail "$f appended"; fi
  grep -q "$f: .*column var.*$why" "$tmp/bad.txt" || fail "$f: $(cat "$tmp/bad.txt")"
done
[ "$("$floe" table describe ns.ev | md5sum)" = "$snap" ] || fail "a refused append committed"
"$floe" scan ns.ev | sort | cmp -s - "$tmp/scan.ndjson" || fail "scan after refusals"

# 3. rewrite: one unshredded file, the same rows
"$floe" rewrite ns.ev --option min-input-files=2 > "$tmp/rewrite.txt" || fail "rewrite: $(cat "$tmp/rewrite.txt")"
grep -q "^rewrote $nfiles data files .* into 1 " "$tmp/rewrite.txt" || fail "rewrite: $(cat "$tmp/rewrite.txt")"
"$floe" scan ns.ev | sort | cmp -s - "$tmp/scan.ndjson" || fail "scan after rewrite"
out=$(find "$tmp/wh" -name '*.parquet' -newer "$tmp/append.txt" | head -1)
[ -n "$out" ] || fail "no rewritten file"
"$floe" inspect "$out" > "$tmp/inspect.txt"
grep -q 'required BYTE_ARRAY value' "$tmp/inspect.txt" && ! grep -q typed_value "$tmp/inspect.txt" ||
  fail "rewritten file is not unshredded: $(sed -n 6,12p "$tmp/inspect.txt")"
"$floe" cat --columns id,var "$out" | sort | cmp -s - "$tmp/scan.ndjson" || fail "floe cat of the rewritten file"

# a shredded file with a row deleted, rewritten
"$floe" table create ns.del --schema "$tmp/schema.json" --property format-version=3 > /dev/null
for f in case-045 case-126 case-046; do
  [ -f "$sv/$f.parquet" ] && "$floe" append ns.del "$sv/$f.parquet" > /dev/null
done
"$floe" scan ns.del | sort > "$tmp/del0.ndjson"
"$floe" delete ns.del --where "id = 1" > /dev/null || fail "delete"
"$floe" scan ns.del | sort > "$tmp/del1.ndjson"
[ "$(wc -l < "$tmp/del1.ndjson")" -lt "$(wc -l < "$tmp/del0.ndjson")" ] && [ -s "$tmp/del1.ndjson" ] ||
  fail "delete: $(wc -l < "$tmp/del0.ndjson") rows before, $(wc -l < "$tmp/del1.ndjson") after"
"$floe" rewrite ns.del --option min-input-files=1 --option delete-file-threshold=1 > "$tmp/rw2.txt" ||
  fail "rewrite with deletes: $(cat "$tmp/rw2.txt")"
"$floe" scan ns.del | sort | cmp -s - "$tmp/del1.ndjson" || fail "scan after rewrite with deletes"
echo "variant_shredded_append: ok"
