#!/usr/bin/env bash
# serve_remote.sh - floe serve on PostgreSQL + s3:// (the signature-checking S3 server of
# tests/js): the catalog, the landing index and the leases in PostgreSQL, landing files,
# quarantine and table files in the bucket, the WAL on local disk.
#   1. 4 clients post 3000 events with Idempotency-Keys; flush + compact; `floe scan`
#      equals the input row for row (canon_ndjson.mjs + compare.mjs); no landing file is
#      left uncommitted in the PostgreSQL index; every landing file is in the bucket.
#   2. 2000 more events while the server is killed with SIGKILL three times (restarted
#      each time; the clients retry with the same keys): after flush + compact the table
#      holds all 5000 events exactly once. A clean stop (SIGTERM) exits 0.
#   3. serve refuses an s3:// warehouse without wal_dir, and a remote wal_dir.
# Between 1 and 2, test_landing_pg (built beside floe) runs on this PostgreSQL: the
# catalog swap marks the landing files committed in its own transaction (I2).
# The S3 server saw no bad signature. Skips (exit 77, "SKIPPED") only when PostgreSQL's
# server binaries are missing.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
serve_pg_s3
export FLOE_COMPACT_LEASE_MS=3000

scan_eq() { # EXPECTED WHAT
  FLOE_CATALOG_URI=$FLOE_PG_URI FLOE_WAREHOUSE=s3://wh/w "$FLOE" scan shop.events \
    --format canonical > "$tmp/got.ndjson" 2> "$tmp/scan.err" || fail "$2: scan: $(cat "$tmp/scan.err")"
  node "$js/compare.mjs" "$1" "$tmp/got.ndjson" --sort-key event_id > "$tmp/cmp.out" 2>&1 ||
    fail "$2: rows differ from the input: $(head -c 2000 "$tmp/cmp.out")"
}

"$FLOE" gen --schema-out "$tmp/schema.json" > /dev/null
"$FLOE" gen --count 3000 --seed 21 -o "$tmp/ev1.ndjson" > /dev/null
"$FLOE" gen --count 2000 --seed 22 -o "$tmp/ev2.ndjson" > /dev/null
node "$js/canon_ndjson.mjs" --schema "$tmp/schema.json" "$tmp/ev1.ndjson" > "$tmp/exp1.ndjson"
node "$js/canon_ndjson.mjs" --schema "$tmp/schema.json" "$tmp/ev2.ndjson" > "$tmp/exp2.ndjson"
cat "$tmp/exp1.ndjson" "$tmp/exp2.ndjson" > "$tmp/exp_all.ndjson"

cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = s3://wh/w
catalog = $FLOE_PG_URI
wal_dir = $tmp/wal
node_id = n1
wal_segment_size = 256KB
[defaults]
seal_bytes = 64KB
seal_age = 500ms
compact_bytes = 400KB
compact_age = 2s
[table shop.events]
schema = $tmp/schema.json
partition = event_type
schema_mode = strict
CONF

# 1: post, flush + compact, scan
start_server --config "$tmp/serve.conf"
python3 "$SERVE_DIR/client.py" --port-file "$tmp/port" --events "$tmp/ev1.ndjson" \
  --table shop.events --clients 4 --batch-size 100 --keys --out "$tmp/acks1" || fail "client 1"
curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" > /dev/null || fail "flush"
scan_eq "$tmp/exp1.ndjson" "after the first flush"
n=$(landing_uncommitted)
[ "$n" = 0 ] || fail "$n landing files not committed after compaction"
n=$(pg_sql "SELECT COUNT(*) FROM landing_files WHERE kind=1 AND uri LIKE 's3://wh/w/_landing/shop.events/event_type=%'")
[ "$n" -gt 0 ] || fail "no landing file registered under s3://wh/w/_landing"
node "$js/s3_cli.mjs" ls wh w/_landing/ > "$tmp/landing.ls"
[ "$(grep -c '\.ndjson\.\(lz4\|zst\)$' "$tmp/landing.ls")" -ge "$n" ] || fail "landing files missing from the bucket"

# I2 on PostgreSQL: the swap's own transaction marks the landing files committed
unit=$(dirname "$FLOE")/test_landing_pg
[ -x "$unit" ] || fail "no $unit"
"$unit" > "$tmp/unit.out" 2>&1 || fail "test_landing_pg: $(tail -20 "$tmp/unit.out")"
grep -q "skipped" "$tmp/unit.out" && fail "test_landing_pg skipped"

# 2: kills while posting
python3 "$SERVE_DIR/client.py" --port-file "$tmp/port" --events "$tmp/ev2.ndjson" \
  --table shop.events --clients 4 --batch-size 50 --keys --key-prefix r2- --out "$tmp/acks2" &
client=$!
for i in 1 2 3; do
  sleep "0.$(( RANDOM % 5 + 3 ))"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
  start_server --config "$tmp/serve.conf"
done
wait "$client" || fail "client 2"
curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" > /dev/null || fail "flush 2"
# leases of the killed processes run out (FLOE_COMPACT_LEASE_MS): compact again until done
for _ in $(seq 20); do
  n=$(landing_uncommitted)
  [ "$n" = 0 ] && break
  sleep 0.5
  curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" > /dev/null || fail "flush 3"
done
[ "$n" = 0 ] || fail "$n landing files not committed after the kills"
scan_eq "$tmp/exp_all.ndjson" "after the kills"
acked=$(cat "$tmp"/acks2/ack-*.jsonl | wc -l)
[ "$acked" = 40 ] || fail "$acked of 40 batches acknowledged"
stop_server
[ -z "$(ls "$tmp/wal" | grep '^wal-')" ] || fail "WAL segments left after a clean stop"
[ "$(s3sig_failures)" = 0 ] || fail "the S3 server saw bad signatures"

# 3: refusals
printf '[server]\nlisten = 127.0.0.1:0\nwarehouse = s3://wh/x\ncatalog = %s\n' "$FLOE_PG_URI" > "$tmp/bad1.conf"
set +e
timeout 20 "$FLOE" serve --config "$tmp/bad1.conf" > /dev/null 2> "$tmp/bad1.err"; rc1=$?
printf '[server]\nlisten = 127.0.0.1:0\nwarehouse = s3://wh/x\ncatalog = %s\nwal_dir = s3://wh/wal\n' \
  "$FLOE_PG_URI" > "$tmp/bad2.conf"
timeout 20 "$FLOE" serve --config "$tmp/bad2.conf" > /dev/null 2> "$tmp/bad2.err"; rc2=$?
set -e
[ $rc1 = 1 ] && grep -q "set wal_dir to a local folder" "$tmp/bad1.err" || fail "no wal_dir: exit $rc1: $(cat "$tmp/bad1.err")"
[ $rc2 = 1 ] && grep -q "must be on a local disk" "$tmp/bad2.err" || fail "remote wal_dir: exit $rc2: $(cat "$tmp/bad2.err")"
! grep -qF "$PG_PASSWORD" "$tmp/bad1.err" "$tmp/bad2.err" || fail "serve echoed the catalog password"
echo "serve_remote: ok"
