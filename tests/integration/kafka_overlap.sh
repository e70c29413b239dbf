#!/usr/bin/env bash
# Kafka source: a batch committing because of its size does not stop the consumption; the
# next batch is taken meanwhile, within max_buffered_bytes. commit_bytes is half of
# max_buffered_bytes (floe's defaults' ratio: 128MB of 256MB), commit_interval 60 s (only
# the size and the flush commit), and each commit is held 4 s before its append
# (FLOE_TEST_KAFKA_COMMIT_PAUSE_MS, tests only).
# 1. 1,600 events (~840 KB) in one go: the batch is sealed at 500 KB (~950 events) and
#    commits; the other ~650 events are taken while that commit is held (nothing committed
#    yet, no partition paused). Before the fix the table's partitions paused as soon as the
#    sealed batch held half of the budget, so nothing was taken until the commit ended.
# 2. 1,400 more events (~740 KB) while that commit is still held: the source reaches the
#    budget, and the consumer waits for the commit: the buffered peak stays within the
#    budget (and one message). Once all is taken, a flush commits the rest.
# At the end the table holds the 3,000 events once each (content checked), and each
# partition's offset in the table is the number of its events in it (one per message).
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 1600 --seed 91 -o "$tmp/w1.ndjson" >/dev/null
"$FLOE" gen --count 1400 --seed 92 -o "$tmp/w2.ndjson" >/dev/null
: > "$tmp/none"
mock_start 3
mock topic events 3
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events partition=event_type)
$(source_section ev events overlap shop.events commit_interval=60s commit_bytes=500KB \
    max_buffered_bytes=1MB)
CONF

# 1.
mock produce events "$tmp/w1.ndjson" lz4
FLOE_TEST_KAFKA_COMMIT_PAUSE_MS=4000 node_start a "$tmp/a.conf"
for _ in $(seq 600); do [ "$(metric floe_kafka_commits_pipelined_total)" -ge 1 ] && break; sleep 0.1; done
[ "$(metric floe_kafka_commits_pipelined_total)" -ge 1 ] || fail "no batch was sealed for its size"
# both counters from one reading: every message taken before the first commit ends
for _ in $(seq 100); do
  consumed=$(metric floe_kafka_consumed_total)
  committed=$(sed -n 's/^floe_kafka_committed_total{source="ev"} //p' "$tmp/metrics")
  [ "$consumed" = 1600 ] || [ "$committed" != 0 ] && break
  sleep 0.1
done
[ "$consumed" = 1600 ] ||
  fail "$consumed of 1600 messages taken before the first batch's commit ended ($committed rows): the consumption stopped for the commit"
[ "$committed" = 0 ] || fail "the first commit ended before the test looked (held 4 s)"
[ "$(metric floe_kafka_consumed_while_committing_total)" -gt 0 ] ||
  fail "nothing counted as taken while committing"
[ "$(metric floe_kafka_pauses_total)" = 0 ] || fail "partitions paused under the budget"

# 2.
mock produce events "$tmp/w2.ndjson" lz4
[ "$(metric floe_kafka_committed_total)" = 0 ] ||
  fail "the first commit ended before the second wave was produced (held 4 s)"
for _ in $(seq 600); do [ "$(metric floe_kafka_consumed_total)" = 3000 ] && break; sleep 0.1; done
[ "$(metric floe_kafka_consumed_total)" = 3000 ] || fail "not every message was taken"
curl -sf -XPOST "http://127.0.0.1:$(cat "$tmp/port-a")/v1/admin/flush" >/dev/null || fail "flush"
wait_rows shop.events 3000 60
peak=$(metric floe_kafka_buffered_peak_bytes)
max_msg=$(cat "$tmp/w1.ndjson" "$tmp/w2.ndjson" | awk '{ if (length($0) > m) m = length($0) } END { print m + 1 }')
[ "$peak" -le $((1000000 + max_msg)) ] || fail "buffered $peak bytes at most, the budget is 1MB"
[ "$peak" -gt 500000 ] || fail "buffered $peak bytes at most: the next batch never grew beside a commit"
commits=$(metric floe_kafka_commits_total)
sleep 1
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" overlap \
  "$tmp/w1.ndjson" "$tmp/none" "$tmp/w2.ndjson" "$tmp/none" || fail "shop.events"
sum=$(FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" \
  "$FLOE" table properties shop.events --json | python3 -c '
import json, sys
p = json.load(sys.stdin)
print(sum(int(v) for k, v in p.items() if k.startswith("floe.kafka.overlap.events.")))')
[ "$sum" = 3000 ] || fail "the table's offsets sum to $sum, expected 3000"
echo "kafka_overlap: ok ($consumed of 1600 taken while the first commit was held; $commits commits; peak $peak bytes buffered, budget 1000000)"
