#!/usr/bin/env bash
# floe serve under kill -9: 4 clients post 5%-malformed batches with Idempotency-Keys and
# retry each batch until it is acknowledged, while the server is killed with SIGKILL at
# random moments 20 times (restarting each time; landing compaction runs alongside).
# Afterwards every batch is acknowledged, every accepted record is in the landing files
# exactly once (no duplicates at all), every rejected one is in the quarantine, and the
# Iceberg table (floe scan) holds every accepted event exactly once. A kill between a
# commit and the landing index update is settled at the next compaction from the table's
# history (counted below; the deterministic case is test_landing_commit).
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
KILLS=${SERVE_CRASH_KILLS:-20}
export FLOE_LOG=info

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 40000 --seed 11 --malformed-rate 0.05 -o "$tmp/events.ndjson" >/dev/null
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
wal_segment_size = 256KB
[defaults]
seal_bytes = 48KB
seal_age = 300ms
compact_bytes = 300KB
compact_age = 2s
[table shop.events]
schema = $tmp/schema.json
partition = event_type
CONF
start_server --config "$tmp/serve.conf"
python3 "$SERVE_DIR/client.py" --port-file "$tmp/port" --events "$tmp/events.ndjson" \
  --table shop.events --clients 4 --batch-size 100 --keys --pace 0.2 --out "$tmp/acks" &
client=$!
# The clients post for about as long as the kills go on (--pace), so compaction rounds
# (compact_age 2 s) keep committing while the server is killed. Most kills come 0.2-0.7 s
# apart; every fourth at least 3 s after the restart, and then not before the table has a
# snapshot more than at the last such kill (at most 15 s more: on a loaded machine under
# the sanitizers a round can take longer than 3 s), so kills also land around commits.
nsnaps() {
  FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" snapshots shop.events \
    --json 2>/dev/null | python3 -S -c "import json,sys; print(len(json.load(sys.stdin)))" 2>/dev/null ||
    echo 0
}
seen=0
for i in $(seq "$KILLS"); do
  if [ $((i % 4)) = 0 ]; then
    sleep 3
    wait_for 15 '[ "$(nsnaps)" -gt "$seen" ]' || true
    seen=$(nsnaps)
  else
    sleep "0.$(( RANDOM % 6 + 2 ))"
  fi
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
  start_server --config "$tmp/serve.conf"
done
wait "$client" || fail "client"
flush_wait
stop_server
acked=$(cat "$tmp"/acks/ack-*.jsonl | wc -l)
echo "serve_crash: $KILLS kills, $acked batches acknowledged"
python3 "$SERVE_DIR/verify.py" "$tmp/events.ndjson" 100 "$tmp/acks" "$tmp/wh" shop.events \
  --all-acked --keys --table "$FLOE" || fail "verify"
grep -q "replayed [1-9]" "$tmp/server.log" || fail "no WAL replay seen"
snaps=$(FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" snapshots shop.events --json |
  python3 -c "import json,sys; print(len(json.load(sys.stdin)))") || fail "snapshots"
[ "$snaps" -gt 1 ] || fail "only $snaps snapshots: compaction did not run during the kills"
settled=$(grep -c "marked committed" "$tmp/server.log" || true)
echo "serve_crash: $snaps snapshots; $settled landing files settled from the table's history"
echo "serve_crash: ok"
