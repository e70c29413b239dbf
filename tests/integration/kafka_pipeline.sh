#!/usr/bin/env bash
# Kafka source: a batch commits on a thread of its own while the consumer takes the next
# one (pipelining). Each commit is held a few seconds after its conversion
# (FLOE_TEST_KAFKA_COMMIT_PAUSE_MS, tests only) so the test can act while it is in flight.
# 1. Crash between the consumption and the commit of a pipelined batch: node a seals the
#    first wave's batch, takes the second wave while that batch commits
#    (floe_kafka_consumed_while_committing_total) and is killed (-9) before the append:
#    the table has no offset and no row.
# 2. A fenced pipelined commit: while a's batch commits (the third wave taken meanwhile
#    into the open batch), "another member" commits partition 0 (its offset set in the
#    table): the commit is fenced, the sealed and the open batch are both dropped, the
#    partitions seek back (to the table's offset, or where the sealed batch started) and
#    the three waves are committed once.
# 3. Crash after a pipelined commit, with the next batch taken but not committed: node a
#    again, killed as soon as its commit of the fourth wave lands while the fifth, taken
#    during that commit, is still in the open batch. The offsets the commit wrote are the
#    positions of the seal: each partition's offset in the table is exactly the number of
#    its events in the table (one event per message, offsets from 0), and fewer than all.
# 4. A revocation while a batch commits: node b joins the group while a's batch is in
#    flight; a's rebalance waits for it (its log), it commits under the fence (no fenced
#    commit on either node) and b resumes from the table's offsets.
# At the end the table holds every event of the six waves exactly once. Every batch
# converts ahead from its first 4 KiB (FLOE_TEST_KAFKA_AHEAD_BYTES: while it is taken, in
# chunks of 4 KiB), so the kills, the fenced commit and the revocation meet conversions
# in progress, and the commits of the last waves are made from them.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info FLOE_TEST_KAFKA_AHEAD_BYTES=4096
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
for w in 1 2 3 4 5 6; do "$FLOE" gen --count 1000 --seed $((70 + w)) -o "$tmp/w$w.ndjson" >/dev/null; done
: > "$tmp/none"
mock_start 3
mock topic events 6
conf() {
  cat > "$tmp/$1.conf" <<CONF
$(server_section "$1")
$(table_section shop.events partition=event_type)
$(source_section ev events pipe shop.events commit_interval=1s kafka.session.timeout.ms=6000 \
    kafka.heartbeat.interval.ms=500)
CONF
}
conf a
conf b
metric() { # metric NODE NAME
  curl -sf "http://127.0.0.1:$(cat "$tmp/port-$1")/metrics" |
    sed -n "s/^$2{source=\"ev\"} //p" || fail "metrics of $1"
}
# until_metric NODE NAME MIN SECONDS
until_metric() {
  for _ in $(seq $(($4 * 10))); do
    [ "$(metric "$1" "$2")" -ge "$3" ] && return 0
    sleep 0.1
  done
  fail "$1: $2 = $(metric "$1" "$2") after $4 s, expected $3 at least"
}
# offsets_match [ALL]: the table's offsets of group pipe (each partition's next offset) sum
# to its rows (one event per message, offsets from 0); with ALL, to ALL rows too
offsets_match() {
  local rows sum
  rows=$(scan_count shop.events) || fail "scan"
  if [ "$rows" = 0 ] && ! FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" \
    "$FLOE" table properties shop.events >/dev/null 2>&1; then
    sum=0
  else
    sum=$(FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" \
      "$FLOE" table properties shop.events --json | python3 -c '
import json, sys
p = json.load(sys.stdin)
print(sum(int(v) for k, v in p.items() if k.startswith("floe.kafka.pipe.events.")))')
  fi
  [ "$rows" = "$sum" ] || fail "the table holds $rows rows, its offsets sum to $sum"
  [ -z "${1:-}" ] || [ "$rows" = "$1" ] || fail "the table holds $rows rows, expected $1"
  echo "$rows"
}

# in_flight PAUSE_MS WAVE: node a (each commit held PAUSE_MS) has a batch committing on its
# own thread and has taken messages of WAVE (produced then) into the next one meanwhile
in_flight() {
  FLOE_TEST_KAFKA_COMMIT_PAUSE_MS=$1 node_start a "$tmp/a.conf"
  until_metric a floe_kafka_commits_pipelined_total 1 60
  mock produce events "$tmp/$2.ndjson" lz4
  until_metric a floe_kafka_consumed_while_committing_total 1 20
}

# 1. killed while a pipelined batch commits, the next one taken meanwhile
mock produce events "$tmp/w1.ndjson" lz4
in_flight 8000 w2
[ "$(metric a floe_kafka_committed_total)" = 0 ] ||
  fail "the first batch committed before the test could kill its node (8 s)"
node_kill a
offsets_match 0 >/dev/null

# 2. a pipelined commit fenced while the next batch is taken
in_flight 6000 w3
[ "$(metric a floe_kafka_committed_total)" = 0 ] ||
  fail "the batch committed before the test could fence it (6 s)"
FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" \
  "$FLOE" table properties shop.events set floe.kafka.pipe.events.0=0 >/dev/null ||
  fail "setting the offset of events/0"
until_metric a floe_kafka_fenced_total 1 30
wait_rows shop.events 3000 120
sleep 2 # anything taken twice would show up now
node_stop a
offsets_match 3000 >/dev/null

# 3. killed right after a pipelined commit, the next batch taken but not committed
mock produce events "$tmp/w4.ndjson" lz4
in_flight 4000 w5
for _ in $(seq 200); do
  grep -q "committed .* (pipelined)" "$tmp/node-a.log" && [ "$(metric a floe_kafka_committed_total)" -gt 0 ] && break
  sleep 0.05
done
node_kill a
rows=$(offsets_match)
[ "$rows" -gt 3000 ] && [ "$rows" -lt 5000 ] ||
  fail "after the kill the table holds $rows rows: expected more than 3000, fewer than 5000"

# 4. a rebalance while a batch commits
FLOE_TEST_KAFKA_COMMIT_PAUSE_MS=10000 node_start a "$tmp/a.conf"
until_metric a floe_kafka_commits_pipelined_total 1 60
[ "$(metric a floe_kafka_committed_total)" = 0 ] || fail "a committed before b joined"
node_start b "$tmp/b.conf"
for _ in $(seq 600); do
  grep -q "a rebalance waits for the batch committing" "$tmp/node-a.log" && break
  sleep 0.1
done
grep -q "a rebalance waits for the batch committing" "$tmp/node-a.log" ||
  fail "the rebalance did not wait for a's batch"
for _ in $(seq 600); do grep -q "assigned events/" "$tmp/node-b.log" && break; sleep 0.1; done
grep -q "assigned events/" "$tmp/node-b.log" || fail "b was never assigned a partition"
mock produce events "$tmp/w6.ndjson" lz4
wait_rows shop.events 6000 180
sleep 2 # anything taken twice would show up now
for n in a b; do
  [ "$(metric $n floe_kafka_fenced_total)" = 0 ] || fail "$n: a commit was fenced"
done
ahead=$(( $(metric a floe_kafka_commits_converted_ahead_total) +
          $(metric b floe_kafka_commits_converted_ahead_total) ))
[ "$ahead" -ge 1 ] || fail "no commit of a or b was converted ahead"
node_stop b
node_stop a
offsets_match 6000 >/dev/null
args=()
for w in 1 2 3 4 5 6; do args+=("$tmp/w$w.ndjson" "$tmp/none"); done
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" pipe "${args[@]}" ||
  fail "table or quarantine"
echo "kafka_pipeline: ok (after the kill in step 3 the table held $rows of 5000 rows)"
