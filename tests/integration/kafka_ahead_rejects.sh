#!/usr/bin/env bash
# Kafka source, converting ahead: a batch's conversion writes its rejected records to
# <wal_dir>/kafka-<source>/<table>-<batch id>.rejects (.floe-tmp-* until it is closed)
# while the batch is still taken
# (FLOE_TEST_KAFKA_AHEAD_BYTES=4096 starts it from 4 KiB; commit_interval 300s keeps the
# batch open). A node killed then leaves that file behind: nothing else names it, and
# `floe orphans` looks only in the table's location. The restarted source must delete it,
# and still commit every message once (rows and quarantine) when it stops.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info FLOE_TEST_KAFKA_AHEAD_BYTES=4096
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 600 --seed 7 --malformed-rate 0.1 --malformed-lines "$tmp/bad" \
  -o "$tmp/ev.ndjson" >/dev/null
total=$(wc -l <"$tmp/ev.ndjson")
mock_start 1
mock topic events 2
mock produce events "$tmp/ev.ndjson"
cat >"$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section ev events ar shop.events commit_interval=300s kafka.session.timeout.ms=6000)
CONF
node_start a "$tmp/a.conf"
spool=$tmp/wal-a/kafka-ev
for _ in $(seq 300); do
  compgen -G "$spool/*.rejects*" >/dev/null && break
  sleep 0.1
done
compgen -G "$spool/*.rejects*" >/dev/null || fail "no batch converted ahead with rejects in 30 s"
node_kill a
stale=$(ls "$spool"/*.rejects*)
node_start a "$tmp/a.conf"
for _ in $(seq 50); do
  gone=1
  for f in $stale; do [ ! -e "$f" ] || gone=0; done
  [ $gone = 1 ] && break
  sleep 0.1
done
for f in $stale; do
  [ ! -e "$f" ] || fail "the killed process's $(basename "$f") is still in $spool after a restart"
done
for _ in $(seq 300); do
  [ "$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics" |
    sed -n 's/^floe_kafka_consumed_total{source="ev"} //p')" = "$total" ] && break
  sleep 0.1
done
node_stop a # commits the open batch
left=$(compgen -G "$spool/*.rejects*" || true)
[ -z "$left" ] || fail "reject files left after a clean stop: $left"
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" ar "$tmp/ev.ndjson" "$tmp/bad"
echo "PASS: kafka_ahead_rejects"
