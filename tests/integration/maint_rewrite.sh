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
"$floe" maintain d.t --once --run-log runs.ndjson > run.log 2>&1 || fail "maintain: $(cat run.log)"
grep -q "rewrite-data *ok" run.log || fail "no rewrite-data run: $(cat run.log)"
# the run log says what the run did; six commits in seconds: the generational planner
python3 - runs.ndjson <<'EOF2' || fail "run log: $(cat runs.ndjson)"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rw = [r for r in runs if r["job"] == "rewrite-data"][0]
assert rw["result"] == "ok", rw
assert rw["files_read"] == 6 and rw["files_written"] == 1, rw
assert rw["bytes_read"] > 0 and rw["bytes_written"] > 0, rw
assert rw["commits"] == 1 and rw["attempts"] == 1 and rw["conflicts"] == 0, rw
assert rw["detail"].startswith("generational:"), rw
assert 0 <= rw["commit_interval_ms"] < 300000, rw
ex = [r for r in runs if r["job"] == "expire"][0]
import re
assert re.search(r"older than [0-9]+ s", ex["detail"]), ex   # the retention of a busy table
assert ex["conflicts"] == 0, ex
EOF2
[ "$("$floe" files d.t | wc -l)" -eq 1 ] || fail "expected 1 file after: $("$floe" files d.t)"
"$floe" snapshots d.t | grep -q "replace .*(current)" || fail "no replace snapshot"
"$floe" scan d.t --columns event_id | sort > after.txt
cmp -s before.txt after.txt || fail "rows changed"
[ "$(wc -l < after.txt)" -eq 3000 ] || fail "row count"
# floe rewrite --json counts its commit attempts
"$floe" gen --seed 3 --count 400 -o more.ndjson > /dev/null
for i in 1 2; do "$floe" append d.t more.ndjson > /dev/null; done
"$floe" rewrite d.t --json -o min-input-files=2 -o target-file-size-bytes=100000000 > rw.json ||
  fail "rewrite: $(cat rw.json)"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))
assert r['commits']==1 and r['attempts']==1 and r['conflicts']==0 and r['bytes_read']>0, r" rw.json ||
  fail "rewrite --json: $(cat rw.json)"
# rewrite options in the maintenance configuration are checked before anything runs
printf '[defaults]\nrewrite-data.options = tier-fanout=1\n' > bad.conf
if "$floe" maintain d.t --once --schedule bad.conf > bad.log 2>&1; then
  fail "a bad rewrite-data.options was accepted"
fi
grep -q "rewrite-data.options: 'tier-fanout'" bad.log || fail "bad options: $(cat bad.log)"
echo "maint_rewrite: 1 passed, 0 failed"
