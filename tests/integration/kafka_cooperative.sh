#!/usr/bin/env bash
# Kafka source with kafka.partition.assignment.strategy = cooperative-sticky (incremental
# rebalances): 4 consumers join and leave one group over a topic of 12 partitions (mock
# cluster of 3 brokers) while 3 rounds of events are produced (5% malformed). A member
# joining takes partitions from the others without their whole assignment being revoked;
# a member leaving (SIGTERM) commits its revoked partitions' batches before it goes, one
# killed (SIGKILL) leaves them to be consumed again from the table's offsets. A member
# stopped after its JoinGroup answer and before its first assignment (the SyncGroup
# answer held back 4 s by the mock) exits cleanly (librdkafka < 2.3.0 would abort
# destroying it: see sticky_wait in src/server/kafka.c). The table ends with every valid
# event once and the quarantine with every malformed one once.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
args=()
for r in 1 2 3; do
  "$FLOE" gen --count 4000 --seed $((40 + r)) --malformed-rate 0.05 \
    --malformed-lines "$tmp/bad$r" -o "$tmp/ev$r.ndjson" >/dev/null
  args+=("$tmp/ev$r.ndjson" "$tmp/bad$r")
done
valid() { local v=0 r; for r in $(seq "$1"); do v=$((v + 4000 - $(wc -l <"$tmp/bad$r"))); done; echo $v; }
mock_start 3
mock topic events 12
mock produce events "$tmp/ev1.ndjson" lz4

conf() {
  { server_section "$1"; cat <<CONF; } > "$tmp/$1.conf"
$(table_section shop.events partition=event_type)
$(source_section ev events coop shop.events commit_interval=500ms commit_bytes=512KB \
    kafka.partition.assignment.strategy=cooperative-sticky kafka.session.timeout.ms=6000 \
    kafka.heartbeat.interval.ms=300)
CONF
}
for n in a b c d; do conf $n; done
node_start a "$tmp/a.conf"
wait_rows shop.events 1000 120
node_start b "$tmp/b.conf"
node_start c "$tmp/c.conf"
mock produce events "$tmp/ev2.ndjson" zstd
wait_rows shop.events "$(valid 1)" 120
for _ in $(seq 300); do
  grep -q "assigned events/" "$tmp/node-b.log" && grep -q "assigned events/" "$tmp/node-c.log" && break
  sleep 0.2
done
grep -q "assigned events/" "$tmp/node-b.log" || fail "node b was never assigned a partition"
grep -q "assigned events/" "$tmp/node-c.log" || fail "node c was never assigned a partition"
# b and c joining took partitions from a under the cooperative protocol (incremental
# revocation; or, when the lag-monitoring offset commit to Kafka raced the rebalance, the
# assignment declared lost: the mock answers ILLEGAL_GENERATION where a broker answers
# REBALANCE_IN_PROGRESS, and librdkafka then gives the whole assignment up)
grep -q "partitions \(revoked\|lost\) (incremental)" "$tmp/node-a.log" ||
  fail "node a had no incremental revocation: $(grep 'revoked\|lost\|assigned' "$tmp/node-a.log" | tail -3)"
grep -q "the whole assignment" "$tmp/node-a.log" &&
  fail "node a's partitions were revoked under the eager protocol"
# the first assignment of d held back: stopped inside the window
# (the group's JoinGroup answers take seconds: a few tries to land inside the window)
for wait in 4 5 6; do
  mock delay 14 5000
  node_start d "$tmp/d.conf"
  sleep "$wait"
  node_stop d        # exit status 0, not librdkafka's abort (134)
  grep -q "waiting for the first assignment" "$tmp/node-d.log" && break
done
if grep -q "waiting for the first assignment" "$tmp/node-d.log"; then
  echo "kafka_cooperative: node d was stopped inside the window and waited for its assignment"
else
  echo "kafka_cooperative: node d was stopped before its JoinGroup answer each time (no window)"
fi
node_stop b          # leaves: its revoked partitions' batches are committed first
node_kill c          # gone: its batches are consumed again by the others
mock produce events "$tmp/ev3.ndjson" gzip
wait_rows shop.events "$(valid 3)" 180
sleep 2 # anything taken twice would show up now
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" coop "${args[@]}" || fail "verify"
echo "kafka_cooperative: $(grep -c 'revoked (incremental)' "$tmp"/node-*.log | tr '\n' ' ')"
echo "kafka_cooperative: ok"
