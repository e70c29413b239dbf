#!/usr/bin/env bash
# maint_rewrite.sh - `floe maintain` runs the small-file rewrite job: six small appends
# become one file in a replace snapshot, with every row kept exactly once.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "maint_rewrite: FAIL: $*" >&2; exit 1; }
cd "$tmp"
"$floe" gen --seed 2 --count 3000 -o ev.ndjson --schema-out ev.schema.json > /dev/null
"$floe" namespace create d > /dev/null
"$floe" table create d.t --schema ev.schema.json > /dev/null
split -l 500 ev.ndjson part_
for f in part_*; do "$floe" append d.t "$f" > /dev/null; done
[ "$("$floe" files d.t | wc -l)" -eq 6 ] || fail "expected 6 small files before"
"$floe" scan d.t --columns event_id | sort > before.txt
"$floe" maintain d.t --once > run.log 2>&1 || fail "maintain: $(cat run.log)"
grep -q "rewrite-data *ok" run.log || fail "no rewrite-data run: $(cat run.log)"
[ "$("$floe" files d.t | wc -l)" -eq 1 ] || fail "expected 1 file after: $("$floe" files d.t)"
"$floe" snapshots d.t | grep -q "replace .*(current)" || fail "no replace snapshot"
"$floe" scan d.t --columns event_id | sort > after.txt
cmp -s before.txt after.txt || fail "rows changed"
[ "$(wc -l < after.txt)" -eq 3000 ] || fail "row count"
echo "maint_rewrite: 1 passed, 0 failed"
