#!/usr/bin/env bash
# Kafka as a source, exactly once: a mock cluster of 3 brokers (librdkafka's, the real
# protocol over loopback), a topic of 12 partitions holding 20,000 generated events of
# which 5% are malformed (lz4-compressed batches), and 3 `floe serve` consumers in one
# group. The table ends with every valid event once (by event_id and content) and the
# quarantine with every malformed one once, with its topic, partition and offset.
# Resume: the group's offsets in Kafka are then set back to 0 while the table's stay at
# the end; restarted consumers resume from the table's (nothing is taken twice), and a
# second round of events (6,000, zstd) is taken exactly once as well.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 20000 --seed 5 --malformed-rate 0.05 --malformed-lines "$tmp/bad1" \
  -o "$tmp/ev1.ndjson" >/dev/null
"$FLOE" gen --count 6000 --seed 6 --malformed-rate 0.05 --malformed-lines "$tmp/bad2" \
  -o "$tmp/ev2.ndjson" >/dev/null
mock_start 3
mock topic events 12
mock produce events "$tmp/ev1.ndjson" lz4

conf() { # conf NODE
  cat > "$tmp/$1.conf" <<CONF
$(server_section "$1")
$(table_section shop.events partition=event_type)
$(source_section events events loaders shop.events commit_interval=1s commit_bytes=2MB \
    kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500)
CONF
}
valid1=$(( 20000 - $(wc -l <"$tmp/bad1") ))
for n in a b c; do conf $n; done
node_start a "$tmp/a.conf"
node_start b "$tmp/b.conf"
node_start c "$tmp/c.conf"
wait_rows shop.events "$valid1" 120
for n in a b c; do node_stop $n; done
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" loaders \
  "$tmp/ev1.ndjson" "$tmp/bad1" || fail "round 1"
snaps=$(FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" snapshots shop.events --json |
  python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
echo "kafka_e2e: round 1 in $snaps snapshots"
grep -q "assigned events/" "$tmp"/node-b.log || fail "node b was never assigned a partition"

# resume from the table, not from Kafka's committed offsets (set back to 0 here)
mock commit loaders events 12 0
mock produce events "$tmp/ev2.ndjson" zstd
node_start a "$tmp/a.conf"
node_start b "$tmp/b.conf"
wait_rows shop.events $(( valid1 + 6000 - $(wc -l <"$tmp/bad2") )) 120
sleep 2 # anything taken twice would show up now
# started from the table's offsets: not one message before them was even fetched
consumed=0
for n in a b; do
  m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-$n")/metrics") || fail "metrics of $n"
  echo "$m" | grep -q '^floe_kafka_skipped_total{source="events"} 0$' ||
    fail "node $n fetched messages before the table's offsets: $(echo "$m" | grep skipped_total)"
  c=$(echo "$m" | sed -n 's/^floe_kafka_consumed_total{source="events"} //p')
  consumed=$((consumed + c))
done
# lag: the high watermarks are sampled every second, after the last commit
# lag0 NODE: a partition of the node shows lag 0 (the metrics captured first: grep -q on a
# pipe would end curl early, and pipefail would take that for no match)
lag0() {
  curl -sf "http://127.0.0.1:$(cat "$tmp/port-$1")/metrics" >"$tmp/lag-$1" || return 1
  grep -q '^floe_kafka_lag{source="events",topic="events",partition="[0-9]*"} 0$' "$tmp/lag-$1"
}
for n in a b; do
  for _ in $(seq 150); do
    lag0 "$n" && break
    sleep 0.2
  done
  lag0 "$n" ||
    fail "node $n: no partition with lag 0 in /metrics: $(grep '^floe_kafka_lag' "$tmp/lag-$n")"
done
[ "$consumed" = 6000 ] || fail "round 2 consumed $consumed messages, expected 6000"
for n in a b; do node_stop $n; done
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" loaders \
  "$tmp/ev1.ndjson" "$tmp/bad1" "$tmp/ev2.ndjson" "$tmp/bad2" || fail "round 2 (resume)"
grep -q "from offset [1-9]" "$tmp"/node-a.log || fail "no partition resumed from the table"
echo "kafka_e2e: ok"
