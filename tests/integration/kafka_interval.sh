#!/usr/bin/env bash
# Kafka source: one snapshot per table per commit interval, whatever the throughput.
# commit_bytes is not set (floe's default: no size trigger), max_buffered_bytes = 4MB: a
# table's open batch is sealed at half of it (2 MB) for memory, and, its commit not due,
# staged (converted into its data files, its rejects into pending quarantine files, its
# spool's memory freed); the interval's commit appends every staged segment's files with
# the last batch's in ONE snapshot.
# 1. A fenced interval: the table exists without offsets, commit_interval 300 s, so the
#    first wave is only staged; "another member" then commits partition 0 (its offset set
#    in the table): the interval's commit (the flush) is fenced, its staged files are
#    deleted, the partitions seek back to the table's offsets and the wave is consumed
#    again and committed once.
# 2. ~33 MB of events (0.5% malformed) in three bursts, each produced once the interval
#    holding the one before has committed, commit_interval 4 s: several segments are
#    staged (floe_kafka_staged_segments_total), intervals commit them, the table gets at
#    most one snapshot per interval (<= ceil(elapsed / 4 s) + 1 with the stop's), the
#    rejects of the staged segments stay pending (not in the quarantine) until their
#    interval commits, and the buffered peak stays within the budget. Before staging
#    (main d6a68f8) every 2 MB batch was a snapshot of its own (16 in 11 s).
# 3. Killed (-9) during an interval holding staged segments (commit_interval 300 s): after
#    a restart every event is committed once, and the dead process's staged files are not
#    in the table (they are orphans, `floe orphans` lists them).
# At the end the table holds every valid event of the three waves exactly once, and the
# quarantine every malformed line exactly once.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
CAT=(env FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh")
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 8000 --seed 31 --malformed-rate 0.005 --malformed-lines "$tmp/bad1" \
  -o "$tmp/w1.ndjson" >/dev/null
"$FLOE" gen --count 60000 --seed 32 --malformed-rate 0.005 --malformed-lines "$tmp/bad2" \
  -o "$tmp/w2.ndjson" >/dev/null
"$FLOE" gen --count 10000 --seed 33 --malformed-rate 0.005 --malformed-lines "$tmp/bad3" \
  -o "$tmp/w3.ndjson" >/dev/null
mock_start 3
mock topic events 3
conf() { # conf INTERVAL
  cat >"$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events partition=event_type)
$(source_section ev events iv shop.events commit_interval="$1" max_buffered_bytes=4MB \
    kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500)
CONF
}
snapshots() {
  "${CAT[@]}" "$FLOE" snapshots shop.events --json >"$tmp/snaps.json"
  python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$tmp/snaps.json"
}
data_files() { find "$tmp/wh" -path '*/data/*' -name '*.parquet' | sort; }
qdir=$tmp/wh/_quarantine/shop.events
published() { compgen -G "$qdir/kafka-iv-*.ndjson" | wc -l || true; }
pending() { compgen -G "$qdir/.kafka-iv/*.ndjson" | wc -l || true; }

# 1. a fenced interval drops its staged files and consumes again
"${CAT[@]}" "$FLOE" namespace create shop >/dev/null
"${CAT[@]}" "$FLOE" table create shop.events --schema "$tmp/schema.json" \
  --partition event_type >/dev/null
mock produce events "$tmp/w1.ndjson" lz4
conf 300s
node_start a "$tmp/a.conf"
until_metric floe_kafka_consumed_total 8000 60
until_metric floe_kafka_staged_segments_total 1 60
staged1=$(data_files)
[ -n "$staged1" ] || fail "a segment is staged and no data file is on disk"
[ "$(snapshots)" = 0 ] || fail "a staged segment made a snapshot"
"${CAT[@]}" "$FLOE" table properties shop.events set floe.kafka.iv.events.0=0 >/dev/null ||
  fail "setting the offset of events/0"
# the flush commits the interval: fenced (its staged files deleted), consumed again
curl -s -XPOST "http://127.0.0.1:$(cat "$tmp/port-a")/v1/admin/flush" >/dev/null || true
until_metric floe_kafka_fenced_total 1 30
for f in $staged1; do
  [ ! -e "$f" ] || fail "the fenced interval's staged file $f is still on disk"
done
until_metric floe_kafka_consumed_total 16000 60 # the wave, then again from the table's offsets
curl -sf -XPOST "http://127.0.0.1:$(cat "$tmp/port-a")/v1/admin/flush" >/dev/null || fail "flush"
wait_rows shop.events "$((8000 - $(wc -w <"$tmp/bad1")))" 60
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" iv "$tmp/w1.ndjson" "$tmp/bad1" ||
  fail "after the fenced interval"

# 2. one snapshot per interval
conf 4s
s0=$(snapshots)
q0=$(published)
log0=$(wc -l <"$tmp/node-a.log")
split -l 20000 -d "$tmp/w2.ndjson" "$tmp/w2." # three bursts, each after an interval's commit
mock produce events "$tmp/w2.00" lz4
t0=$(date +%s.%N)
node_start a "$tmp/a.conf"
checked=0
# until the first interval commits: the staged segments' rejects are pending, not published
# (listed before the commit counter is read, so a commit after the listing cannot pass it)
while [ "$(metric floe_kafka_commits_total)" = 0 ]; do
  pub=$(published)
  pen=$(pending)
  if [ "$(metric floe_kafka_commits_total)" = 0 ] &&
    [ "$(sed -n 's/^floe_kafka_staged_segments_total{source="ev"} //p' "$tmp/metrics")" -ge 2 ]; then
    [ "$pub" = "$q0" ] || fail "$((pub - q0)) quarantine files published before their interval's commit"
    [ "$pen" -gt 0 ] && checked=1
  fi
  [ "$(echo "$(date +%s.%N) - $t0 > 300" | bc)" = 0 ] || fail "no commit in 300 s"
  sleep 0.05
done
for burst in 0 1 2; do
  [ $burst = 0 ] || mock produce events "$tmp/w2.0$burst" lz4
  until_metric floe_kafka_consumed_total $((burst * 20000 + 20000)) 300
  until_metric floe_kafka_commits_total $((burst + 1)) 30 # the interval commits on its own
done
[ "$checked" = 1 ] || fail "never saw two staged segments with pending rejects before the first commit"
staged=$(metric floe_kafka_staged_segments_total)
peak=$(metric floe_kafka_buffered_peak_bytes)
node_stop a
t1=$(date +%s.%N)
s1=$(snapshots)
elapsed=$(echo "$t1 - $t0" | bc)
limit=$(python3 -c "import math,sys; print(math.ceil(float(sys.argv[1]) / 4) + 1)" "$elapsed")
[ "$staged" -ge 4 ] || fail "$staged segments staged, expected several (33 MB in 2 MB segments)"
tail -n +$((log0 + 1)) "$tmp/node-a.log" |
  grep -E "shop.events: committed [0-9]+ rows .*, [0-9]+ staged segments" >"$tmp/commits"
ticks=$(grep -cvE ", 0 staged segments" "$tmp/commits" || true)
[ "$ticks" -ge 2 ] || fail "$ticks interval commits held staged segments, expected 2 at least: $(cat "$tmp/commits")"
[ $((s1 - s0)) -le "$limit" ] ||
  fail "$((s1 - s0)) snapshots in $elapsed s with commit_interval 4 s (at most $limit)"
max_msg=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 1 }' "$tmp/w2.ndjson")
[ "$peak" -le $((4000000 + max_msg)) ] || fail "buffered $peak bytes at most, the budget is 4MB"
[ "$(pending)" = 0 ] || fail "$(pending) quarantine files left pending after the stop"
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" iv "$tmp/w1.ndjson" "$tmp/bad1" \
  "$tmp/w2.ndjson" "$tmp/bad2" || fail "after the intervals"
python3 -c '
import json, sys
t0 = float(sys.argv[2]) * 1000
print("snapshots at", [round((s["timestamp_ms"] - t0) / 1000, 1) for s in json.load(open(sys.argv[1]))], "s after the start")' "$tmp/snaps.json" "$t0" || true
echo "interval: $((s1 - s0)) snapshots in $elapsed s (commit_interval 4 s, at most $limit), $staged segments staged, peak $peak bytes"

# 3. killed during an interval with staged segments
conf 300s
before=$(data_files)
mock produce events "$tmp/w3.ndjson" lz4
node_start a "$tmp/a.conf"
until_metric floe_kafka_staged_segments_total 2 60
node_kill a
dead=$(comm -13 <(echo "$before") <(data_files))
[ -n "$dead" ] || fail "no staged data file on disk at the kill"
conf 4s
node_start a "$tmp/a.conf"
until_metric floe_kafka_consumed_total 10000 60
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" iv "$tmp/w1.ndjson" "$tmp/bad1" \
  "$tmp/w2.ndjson" "$tmp/bad2" "$tmp/w3.ndjson" "$tmp/bad3" || fail "after the kill"
"${CAT[@]}" "$FLOE" orphans shop.events --older-than 0s --force --dry-run --list \
  >"$tmp/orphans" 2>&1 || fail "floe orphans: $(tail -3 "$tmp/orphans")"
for f in $dead; do
  grep -qF "$(basename "$f")" "$tmp/orphans" ||
    fail "the dead process's staged file $(basename "$f") is not an orphan (in the table?)"
done
echo "PASS: kafka_interval ($(echo "$dead" | wc -l) staged files of the killed process left as orphans)"
