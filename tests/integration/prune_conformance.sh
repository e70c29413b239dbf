#!/usr/bin/env bash
# prune_conformance.sh - on every Iceberg table of the shared conformance set
# (../shared/conformance/iceberg, env FLOE_CONFORMANCE) floe can read, random --where
# filters give the same rows with pruning as without (test_prune_diff: the pruned plan
# holds every file with a matching row, with its delete files; a few filters read both
# ways). Tables of more than 20,000 rows get 30 filters, checked on the plan only.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
prune=${TEST_PRUNE_DIFF_BIN:-$(dirname "$floe")/test_prune_diff}
conf=${FLOE_CONFORMANCE:-$src/../shared/conformance}
fail() { echo "prune_conformance: FAIL: $*" >&2; exit 1; }
[ -d "$conf/iceberg" ] || { echo "prune_conformance: no conformance tables at $conf/iceberg, skipped"; exit 77; }
[ -x "$prune" ] || fail "test_prune_diff not built at $prune"
out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT
list=$(find "$conf/iceberg" -type d -name metadata | sed 's|/metadata$||' | sort | tr '\n' ';')
[ -n "$list" ] || fail "no tables under $conf/iceberg"
FLOE_PRUNE_TABLES="$list" FLOE_PRUNE_OPTIONAL=20 FLOE_PRUNE_FILTERS=${BOUNDS_FILTERS:-100} \
  FLOE_PRUNE_SEED=23 "$prune" > "$out" 2> "$out.err" || {
  cat "$out"
  grep -v ': warn: ' "$out.err" | sed -n '/^==[0-9]*==/q;p' | head -40 >&2
  fail "pruned scans differ"
}
sed "s|$conf/iceberg/||" "$out"
