#!/usr/bin/env bash
# floe serve end to end: 6 concurrent clients post NDJSON and JSON-array batches (5%
# malformed) to a configured strict table; every accepted record is in the landing files
# exactly once and every rejected one in the quarantine; a clean stop leaves no WAL; after
# a restart and a forced compaction the Parquet files hold exactly the accepted events.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 6000 --seed 3 --malformed-rate 0.05 -o "$tmp/events.ndjson" >/dev/null
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
[defaults]
seal_bytes = 64KB
seal_age = 1s
compact_bytes = 1GB
compact_age = 1h
[table shop.events]
schema = $tmp/schema.json
partition = event_type, day(ts)
schema_mode = strict
CONF
start_server --config "$tmp/serve.conf"
python3 "$SERVE_DIR/client.py" --port-file "$tmp/port" --events "$tmp/events.ndjson" \
  --table shop.events --clients 6 --batch-size 100 --out "$tmp/acks" --array || fail "client"
curl -sf "http://127.0.0.1:$port/metrics" > "$tmp/metrics.txt" || fail "metrics"
grep -q '^floe_events_accepted_total{table="shop.events"} [1-9]' "$tmp/metrics.txt" || fail "metrics: accepted"
grep -q '^floe_ingest_request_duration_seconds_count 60$' "$tmp/metrics.txt" || fail "metrics: 60 requests"
stop_server
[ -z "$(ls "$tmp/wh/_wal/node1/" | grep '^wal-')" ] || fail "WAL segments left after a clean stop"
python3 "$SERVE_DIR/verify.py" "$tmp/events.ndjson" 100 "$tmp/acks" "$tmp/wh" shop.events \
  --all-acked --keys || fail "landing/quarantine check"
# partition folders follow the spec
ls "$tmp/wh/_landing/shop.events/" | grep -q '^event_type=page_view$' || fail "partition folders"

start_server --config "$tmp/serve.conf"
flush_wait
python3 "$SERVE_DIR/verify.py" "$tmp/events.ndjson" 100 "$tmp/acks" "$tmp/wh" shop.events \
  --all-acked --keys --table "$FLOE" --icebird tests/js/icebird_read.mjs || fail "table check"
n=$(sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" "SELECT COUNT(*) FROM landing_files WHERE kind=1 AND state<>'committed'")
[ "$n" = 0 ] || fail "$n landing files not committed after compaction"
stop_server
echo "serve_e2e: ok"
