#!/usr/bin/env bash
# Kafka source: messages quarantined whole count against max_buffered_bytes. With format =
# array, a message that is not an array is held whole (for the quarantine) until its
# batch commits; 120 such messages of 64 KB (7.5 MB, 4 partitions) arrive with
# max_buffered_bytes = 1MB and commit_interval = 300s. They must commit as the budget
# fills, not all be held until the interval (they were: their bytes did not count): once
# all are consumed, the table's offsets reach the end well before it,
# the peak buffered bytes (floe_kafka_buffered_peak_bytes) stay within the budget plus one
# message and drop to 0 once all are committed, and the quarantine holds each message
# once, with its partition and offset. commit_bytes = 500KB (half of the budget): each
# batch sealed for memory commits, as before staging; without it the batches would be
# staged (their memory freed, their rejects pending) and committed at the interval.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
python3 - "$tmp/msgs" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(120):
        f.write('{"n": %d, "pad": "%s"}\n' % (i, "x" * (64 * 1024 - 30)))
PY
mock_start 1
mock topic events 4
mock produce events "$tmp/msgs"
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section arr events qb shop.events format=array commit_interval=300s commit_bytes=500KB \
    max_buffered_bytes=1MB kafka.session.timeout.ms=6000)
CONF
node_start a "$tmp/a.conf"
metric() {
  local m
  m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics"
  echo "$m" | sed -n "s/^$1{source=\"arr\"} //p"
}
offsets() {
  FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" table properties \
    shop.events --json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
print(sum(int(v) for k, v in p.items() if k.startswith("floe.kafka.qb.events.")))' || echo 0
}
for _ in $(seq 600); do [ "$(metric floe_kafka_consumed_total)" = 120 ] && break; sleep 0.1; done
[ "$(metric floe_kafka_consumed_total)" = 120 ] || fail "consumed $(metric floe_kafka_consumed_total) of 120"
for _ in $(seq 150); do [ "$(offsets)" = 120 ] && break; sleep 0.2; done
got=$(offsets)
peak=$(metric floe_kafka_buffered_peak_bytes)
[ "$got" = 120 ] || fail "the table's offsets sum to $got 30 s after the 120 messages were taken (commit_interval 300s): the quarantined messages are held beyond max_buffered_bytes"
[ "$peak" -le $((1024 * 1024 + 64 * 1024)) ] || fail "peak buffered bytes $peak, budget 1 MiB"
# all committed: nothing is held any more (what was counted in is counted out)
for _ in $(seq 50); do [ "$(metric floe_kafka_buffered_bytes)" = 0 ] && break; sleep 0.1; done
[ "$(metric floe_kafka_buffered_bytes)" = 0 ] ||
  fail "$(metric floe_kafka_buffered_bytes) bytes buffered once every message is committed"
node_stop a
python3 - "$tmp/wh" <<'PY' || fail "quarantine"
import collections, glob, json, sys
q = [json.loads(l) for f in glob.glob(f"{sys.argv[1]}/_quarantine/shop.events/kafka-qb-*.ndjson")
     for l in open(f)]
coords = collections.Counter((x["source"], x["offset"]) for x in q)
ns = sorted(json.loads(x["record"])["n"] for x in q)
if ns != list(range(120)) or max(coords.values()) != 1 or len(coords) != 120:
    sys.exit(f"quarantine: {len(q)} records, {len(coords)} offsets (want 120 once each)")
print(f"kafka_quarantine_budget: 120 messages quarantined once each")
PY
echo "kafka_quarantine_budget: ok (peak buffered $peak bytes)"
