#!/usr/bin/env bash
# Kafka source: an admin flush never answers that it committed a batch that was dropped.
# A batch commits on its own thread while the next one is taken; when its commit fails
# and the table then holds more than half of max_buffered_bytes, both batches are dropped
# (consumed again after the back-off). A flush waiting for that commit answered 200
# {"flushed":true} although nothing was committed (the drop was taken for done); now it
# answers the commit's error, and once the table can be written again a flush commits
# every event once.
# The commit is held 3 s (FLOE_TEST_KAFKA_COMMIT_PAUSE_MS, tests only) and the table's
# metadata folder is immutable (chattr +i) meanwhile, so its append fails.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
need_chattr
trap 'chattr -i "$tmp/wh/shop/events/metadata" 2>/dev/null || true; cleanup' EXIT
export FLOE_LOG=info FLOE_TEST_KAFKA_COMMIT_PAUSE_MS=3000
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 1600 --seed 91 -o "$tmp/ev.ndjson" >/dev/null
: > "$tmp/none"
head -3 "$tmp/ev.ndjson" > "$tmp/ev0.ndjson"
tail -n +4 "$tmp/ev.ndjson" > "$tmp/ev1.ndjson"
mock_start 1
mock topic events 3
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section ev events g shop.events commit_interval=60s commit_bytes=500KB \
    max_buffered_bytes=1MB)
CONF
node_start a "$tmp/a.conf"
flush() {
  curl -s -o "$tmp/flush.out" -w '%{http_code}' -X POST \
    "http://127.0.0.1:$(cat "$tmp/port-a")/v1/admin/flush"
}
mock produce events "$tmp/ev0.ndjson"
for _ in $(seq 100); do
  [ "$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics" |
    sed -n 's/^floe_kafka_consumed_total{source="ev"} //p')" = 3 ] && break
  sleep 0.1
done
[ "$(flush)" = 200 ] || fail "the first flush: $(cat "$tmp/flush.out")"
[ "$(scan_count shop.events)" = 3 ] || fail "the first 3 events are not committed"
chattr +i "$tmp/wh/shop/events/metadata"
mock produce events "$tmp/ev1.ndjson"
# the first ~950 taken make a batch of 500 KB, sealed and held; the rest are taken meanwhile
for _ in $(seq 100); do
  c=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics" |
    sed -n 's/^floe_kafka_consumed_total{source="ev"} //p')
  [ "${c:-0}" -ge 1300 ] && break
  sleep 0.1
done
code=$(flush)
rows=$(scan_count shop.events)
grep -q "commit failed (batch dropped" "$tmp/node-a.log" ||
  fail "no batch was dropped: the test did not test (flush: $code)"
[ "$code" != 200 ] || fail "the flush answered 200 ($(cat "$tmp/flush.out")) with $rows rows in the table"
chattr -i "$tmp/wh/shop/events/metadata"
ok=
for _ in $(seq 30); do
  [ "$(flush)" = 200 ] && [ "$(scan_count shop.events)" = 1600 ] && { ok=1; break; }
  sleep 0.5
done
[ -n "$ok" ] || fail "the table holds $(scan_count shop.events) events after the folder is writable, expected 1600"
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" g "$tmp/ev.ndjson" "$tmp/none" ||
  fail "the table"
echo "kafka_flush_failed: ok"
