#!/usr/bin/env bash
# Kafka source: a batch entirely quarantined, and the memory budget (max_buffered_bytes).
# 1. 400 messages that are all malformed: their batches hold no row, yet they are
#    committed: the table's properties hold each partition's next offset, and a restarted
#    consumer takes none of them again (each in the quarantine once).
# 2. The catalog is locked (an exclusive SQLite transaction) while 6,000 events arrive
#    with max_buffered_bytes = 1MB: the commits fail and are kept, the buffered bytes
#    reach the budget, fetching pauses (floe_kafka_paused_partitions, the log), the
#    peak buffered bytes stay within the budget plus one message; the lock goes, the
#    batch commits, fetching resumes and the table holds every event once. commit_bytes
#    = 500KB (half of the budget): each batch sealed for memory commits (and fails);
#    without it the batches of the first interval would be staged (converted, the
#    catalog only read), their memory freed, and nothing would need to pause.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info FLOE_SQLITE_BUSY_MS=200
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 6000 --seed 31 -o "$tmp/ev.ndjson" >/dev/null
python3 -c "
import sys
open(sys.argv[1], 'w').write(''.join(f'{{\"event_id\": {i}, broken\n' for i in range(400)))
" "$tmp/junk.ndjson"
seq 400 > "$tmp/junk.bad"
: > "$tmp/none"
mock_start 3
mock topic events 4
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section events events budget shop.events commit_interval=1s commit_bytes=500KB \
    max_buffered_bytes=1MB kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500)
CONF
metrics() { curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics" || fail "metrics"; }
metric() { metrics | sed -n "s/^$1{source=\"events\"} //p"; }

# 1. a batch of malformed messages only
mock produce events "$tmp/junk.ndjson" none
node_start a "$tmp/a.conf"
for _ in $(seq 300); do [ "$(metric floe_kafka_quarantined_total)" = 400 ] && break; sleep 0.2; done
[ "$(metric floe_kafka_quarantined_total)" = 400 ] || fail "quarantined $(metric floe_kafka_quarantined_total) of 400"
node_stop a
python3 - "$tmp/wh" <<'PY' || fail "the table's offsets after a batch of rejects only"
import glob, json, os, sys
meta = max(glob.glob(f"{sys.argv[1]}/shop/events/metadata/*.metadata.json"), key=os.path.getmtime)
props = json.load(open(meta)).get("properties", {})
offs = {k: int(v) for k, v in props.items() if k.startswith("floe.kafka.budget.events.")}
print("offsets:", offs)
sys.exit(0 if len(offs) == 4 and sum(offs.values()) == 400 else 1)
PY
assigned=$(grep -c "assigned events/" "$tmp/node-a.log")
node_start a "$tmp/a.conf"
# the group takes the restarted consumer back after the mock's rebalance delay (its
# session timeout less 1 s): count from its assignment, not from its start
for _ in $(seq 300); do
  [ "$(grep -c "assigned events/" "$tmp/node-a.log")" -gt "$assigned" ] && break
  sleep 0.1
done
[ "$(grep -c "assigned events/" "$tmp/node-a.log")" -gt "$assigned" ] ||
  fail "the restarted consumer was never assigned a partition"
sleep 3
[ "$(metric floe_kafka_consumed_total)" = 0 ] || fail "restarted, it took $(metric floe_kafka_consumed_total) messages again"

# 2. the budget, with the catalog locked
python3 -c "
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('BEGIN EXCLUSIVE')
print('locked', flush=True)
time.sleep(600)
" "$tmp/wh/catalog.db" > "$tmp/lock.out" &
lock=$!
for _ in $(seq 100); do grep -q locked "$tmp/lock.out" && break; sleep 0.1; done
mock produce events "$tmp/ev.ndjson" lz4
for _ in $(seq 600); do [ "$(metric floe_kafka_paused_partitions)" -gt 0 ] && break; sleep 0.1; done
paused=$(metric floe_kafka_paused_partitions)
consumed=$(metric floe_kafka_consumed_total)
sleep 2
consumed2=$(metric floe_kafka_consumed_total)
kill "$lock"; wait "$lock" 2>/dev/null || true
[ "$paused" -gt 0 ] || fail "no partition paused with the catalog locked"
[ "$consumed" = "$consumed2" ] && [ "$consumed" -lt 6000 ] ||
  fail "paused, yet it took messages: $consumed, then $consumed2"
wait_rows shop.events 6000 120
peak=$(metric floe_kafka_buffered_peak_bytes)
max_msg=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 1 }' "$tmp/ev.ndjson")
[ "$peak" -le $((1000000 + max_msg)) ] || fail "buffered $peak bytes at most, the budget is 1MB"
[ "$(metric floe_kafka_paused_partitions)" = 0 ] || fail "partitions still paused"
grep -q "fetching paused" "$tmp/node-a.log" && grep -q "fetching resumed" "$tmp/node-a.log" ||
  fail "no pause and resume in the log"
sleep 1
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" budget \
  "$tmp/junk.ndjson" "$tmp/junk.bad" "$tmp/ev.ndjson" "$tmp/none" || fail "table or quarantine"
echo "kafka_budget: ok (peak $peak bytes buffered, budget 1000000)"
