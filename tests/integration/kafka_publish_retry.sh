#!/usr/bin/env bash
# Kafka source: a committed batch's quarantine file whose publication failed is published
# as soon as it can be, not only at the partition's next commit or assignment. The rename
# from _quarantine/<table>/.kafka-<group>/ failing after the commit (here: the table's
# quarantine folder immutable, chattr +i) left the file pending; settle() published it
# before the partition's next commit or at its next assignment, and a partition that
# received nothing more had neither: its rejects stayed out of the quarantine (their
# offsets committed) for as long as the server ran, also after a clean stop.
# 200 events on one partition, every 10th malformed; the quarantine folder is immutable
# while they are committed, then writable again: the 20 rejects are published without
# another message or a restart, and the server's stop leaves nothing pending; the metric
# floe_kafka_quarantined_total counts them (it counted only the files published at once).
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
mkdir -p "$tmp/wh/_quarantine/shop.q/.kafka-g"
if ! chattr +i "$tmp/wh/_quarantine/shop.q" 2>/dev/null; then
  echo "SKIP: chattr +i not possible here (needs root and a file system with the flag)"
  exit 77
fi
trap 'chattr -i "$tmp/wh/_quarantine/shop.q" 2>/dev/null || true; cleanup' EXIT
if touch "$tmp/wh/_quarantine/shop.q/probe" 2>/dev/null; then
  echo "SKIP: an immutable folder still takes files here"
  exit 77
fi
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 200 --seed 61 -o "$tmp/gen.ndjson" >/dev/null
python3 - "$tmp/gen.ndjson" "$tmp/ev.ndjson" "$tmp/bad" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
bad = list(range(1, len(lines) + 1, 10))
for i in bad:
    lines[i - 1] = b'{"event_id": "not a number", "broken":'
open(sys.argv[2], "wb").write(b"\n".join(lines) + b"\n")
open(sys.argv[3], "w").write("".join(f"{i}\n" for i in bad))
PY
mock_start 1
mock topic events 1
{
  server_section a
  cat <<CONF
$(table_section shop.q)
$(source_section ev events g shop.q commit_interval=300ms kafka.session.timeout.ms=6000)
CONF
} > "$tmp/a.conf"
node_start a "$tmp/a.conf"
mock produce events "$tmp/ev.ndjson"
wait_rows shop.q 180 60
grep -q "(left pending)" "$tmp/node-a.log" || fail "no publication failed: the test did not test"
published() { find "$tmp/wh/_quarantine/shop.q" -maxdepth 1 -name 'kafka-g-*.ndjson' | wc -l; }
[ "$(published)" = 0 ] || fail "a quarantine file was published into the immutable folder"
chattr -i "$tmp/wh/_quarantine/shop.q"
for _ in $(seq 50); do
  [ -z "$(ls -A "$tmp/wh/_quarantine/shop.q/.kafka-g")" ] && break
  sleep 0.2
done
[ -z "$(ls -A "$tmp/wh/_quarantine/shop.q/.kafka-g")" ] ||
  fail "10 s after the folder is writable again, still pending: $(ls "$tmp/wh/_quarantine/shop.q/.kafka-g")"
# the rejects count as quarantined once their commit succeeded, published at once or later
m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics"
q=$(echo "$m" | sed -n 's/^floe_kafka_quarantined_total{source="ev"} //p')
[ "$q" = 20 ] || fail "floe_kafka_quarantined_total is '$q', expected 20"
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.q "$FLOE" g "$tmp/ev.ndjson" "$tmp/bad" ||
  fail "the table or the quarantine"
echo "kafka_publish_retry: ok"
