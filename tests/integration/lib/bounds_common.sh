# bounds_common.sh - sourced by bounds_differential.sh and bounds_rewrite.sh: the tools,
# a scratch catalog, and the checks both run (tests/js/bounds_oracle.mjs, test_prune_diff).
# Expects $name (the test's name) to be set.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
prune=${TEST_PRUNE_DIFF_BIN:-$(dirname "$floe")/test_prune_diff}
js=$src/tests/js
filters=${BOUNDS_FILTERS:-300}
fail() { echo "$name: FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || { echo "$name: node missing, skipped"; exit 77; }
[ -d "$js/node_modules/@duckdb/node-api" ] && [ -d "$js/node_modules/parquet-wasm" ] &&
  [ -d "$js/node_modules/avsc" ] ||
  { echo "$name: tests/js oracles not installed (scripts/setup --test), skipped"; exit 77; }
[ -x "$prune" ] || fail "test_prune_diff not built at $prune"
tmp=$(mktemp -d)
pid=
cleanup() { if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi; rm -rf "$tmp"; }
trap cleanup EXIT
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
oracle() { node "$js/bounds_oracle.mjs" "$@"; }
meta() { "$floe" table describe "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"])'; }

# check TABLE MODE MINFILES: the manifest bounds of every live file equal DuckDB's min/max
check() {
  local m
  m=$(meta "$1")
  oracle check --metadata "${m#file://}" --mode "$2" --min-files "$3" > "$tmp/check.out" 2>&1 ||
    { tail -5 "$tmp/check.out" >&2; fail "$1: manifest bounds differ from DuckDB's"; }
  tail -1 "$tmp/check.out" | sed "s/^/$1 ($2): /"
}

# prune_diff LIST: random filters, pruned plans against the row filter over every row
prune_diff() {
  FLOE_PRUNE_TABLES="$1" FLOE_PRUNE_SEED=17 "$prune" > "$tmp/prune.out" 2> "$tmp/prune.err" || {
    cat "$tmp/prune.out"
    grep -v ': warn: ' "$tmp/prune.err" | sed -n '/^==[0-9]*==/q;p' | head -40 >&2
    fail "pruned scans differ"
  }
  cat "$tmp/prune.out"
}

# pruned_some TABLE...: the check is not empty: each table pruned files for a tenth of
# its filters or more
pruned_some() {
  local t line n p
  for t in "$@"; do
    line=$(grep "^$t: " "$tmp/prune.out" || true)
    n=$(echo "$line" | sed -E 's/.* ([0-9]+) filters .*/\1/')
    p=$(echo "$line" | sed -E 's/.* ([0-9]+) pruned something.*/\1/')
    [ -n "$line" ] && [ "$p" -ge $((n / 10)) ] || fail "$t: only ${p:-0} of ${n:-?} filters pruned anything"
  done
}

# cli_same TABLE WHERE...: floe scan --where W gives the rows of floe scan --where W --no-prune
cli_same() {
  local t=$1 w a c
  shift
  for w in "$@"; do
    a=$("$floe" scan "$t" --where "$w" --format canonical | sort | md5sum)
    c=$("$floe" scan "$t" --where "$w" --no-prune --format canonical | sort | md5sum)
    [ "$a" = "$c" ] || fail "$t: floe scan --where \"$w\" differs from --no-prune"
  done
}
