# Sourced by the variant tests: the shredded_variant conformance values as NDJSON.
# variant_conformance_values DIR OUT: every case file's `var` column through floe cat
# (the error cases print nothing) into OUT; fails (through the caller's fail) when fewer
# than 100 values were read. Needs $floe and fail().
variant_conformance_values() {
  local f
  for f in "$1"/case-*.parquet; do
    "$floe" cat --columns var "$f" 2>/dev/null || true
  done > "$2"
  nconf=$(wc -l < "$2")
  [ "$nconf" -ge 100 ] || fail "only $nconf values read from $1"
}
