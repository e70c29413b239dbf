#!/usr/bin/env bash
# append_race.sh - two `floe append` of the same Parquet file running at the same time,
# as it is and with --copy: exactly one commits (exit 0), the other fails (exit 1) saying
# the file (or its bytes) is already in the table, and the table holds the rows once.
#   - "held": a third process holds the SQLite catalog's write lock while both appends
#     start, so both load the table without the file, pass the check made before anything
#     is written, and wait at their commit; the second to commit must find the first's
#     snapshot in its commit attempt (without that check both commit, every time);
#   - "free": the two appends simply start together, several times.
# After each round the table scans to the file's 20 rows and, with --copy, its data folder
# holds the one copy (the loser never deletes a copy the winner may have committed).
set -euo pipefail
name=append_race oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"

python3 -c '[print("{\"k\":\"r%d\",\"v\":%d}" % (j, j)) for j in range(20)]' > "$tmp/in.ndjson"
"$floe" convert --schema "$tmp/s.json" -o "$tmp/in" "$tmp/in.ndjson" >/dev/null
f=$tmp/in/part-00000.parquet

# round TABLE MODE(""|--copy) HOLD(0|1)
round() {
  local t=$1 mode=$2 hold=$3 pl= r1=0 r2=0
  "$floe" table create "ns.$t" --schema "$tmp/s.json" \
    --property commit.retry.min-wait-ms=5 --property commit.retry.max-wait-ms=50 >/dev/null
  if [ "$hold" = 1 ]; then
    rm -f "$tmp/locked"
    python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
time.sleep(2)
c.execute("COMMIT")' "$catalog_db" "$tmp/locked" & pl=$!
    while [ ! -e "$tmp/locked" ]; do sleep 0.02; done
  fi
  "$floe" append "ns.$t" "$f" $mode > "$tmp/$t.a" 2>&1 & local p1=$!
  "$floe" append "ns.$t" "$f" $mode > "$tmp/$t.b" 2>&1 & local p2=$!
  wait $p1 || r1=$?
  wait $p2 || r2=$?
  [ -z "$pl" ] || wait "$pl"
  local snaps
  snaps=$("$floe" snapshots "ns.$t" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  case "$r1 $r2" in
    "0 1") loser=$tmp/$t.b ;;
    "1 0") loser=$tmp/$t.a ;;
    *) fail "$t ($mode hold=$hold): exits $r1 $r2 (want one 0 and one 1), $snaps snapshots: $(cat "$tmp/$t.a" "$tmp/$t.b")"; return ;;
  esac
  [ "$snaps" = 1 ] || fail "$t: $snaps snapshots"
  if [ -z "$mode" ]; then
    grep -q "is already a data file of the table" "$loser" || fail "$t: the loser says: $(cat "$loser")"
  else
    grep -q "already in the table" "$loser" || fail "$t: the loser says: $(cat "$loser")"
    [ "$(ls "$tmp/wh/ns/$t/data" | wc -l)" = 1 ] || fail "$t: data folder: $(ls "$tmp/wh/ns/$t/data")"
  fi
  grep -q "manifest .*avro:" "$loser" && fail "$t: the message names a manifest: $(cat "$loser")"
  local rows
  rows=$("$floe" scan "ns.$t" --format canonical 2>&1 | wc -l)
  [ "$rows" = 20 ] || fail "$t: $rows rows after the race: $("$floe" scan "ns.$t" --format canonical 2>&1 | head -3)"
}

for i in 1 2; do round "held$i" "" 1; round "heldcopy$i" --copy 1; done
for i in 1 2 3; do round "free$i" "" 0; round "freecopy$i" --copy 0; done
[ -f "$f" ] || fail "the input file is gone"

[ $fails = 0 ] || exit 1
echo "$name: ok"
