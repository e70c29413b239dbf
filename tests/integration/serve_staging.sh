#!/usr/bin/env bash
# serve_staging.sh - a compaction worker (floe work) copies a partition's landing files from
# the object store several at a time, without a HEAD per file. One ingest node seals 4000
# events into ten small landing files of one partition in the signature-checking S3
# server of tests/js, which answers every request 100 ms after it came (--latency-ms);
# then one worker compacts them. Checks:
#   - the S3 server saw at least 3 requests at once while the worker alone ran (the
#     landing files are fetched concurrently: one at a time, a job of N files waits N
#     round trips or more);
#   - the worker sent fewer HEAD requests than there are landing files (a copy starts with
#     a GET that brings the size, no HEAD per file);
#   - the table is partitioned (event_type: 8 partitions, all due at once): while one
#     partition converts, the worker claims the next and stages it (its debug log says
#     "claimed ahead"; before, partitions were claimed, staged and converted in turn);
#   - every event is in the table exactly once, every landing file committed, and every
#     request the worker made was correctly signed.
# Skips (exit 77, "SKIPPED") only when PostgreSQL's server binaries are missing.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
S3SIG_ARGS="--latency-ms 100" serve_pg_s3
export FLOE_LOG=info

"$FLOE" gen --schema-out "$tmp/schema.json" > /dev/null
"$FLOE" gen --count 4000 --seed 5 -o "$tmp/events.ndjson" > /dev/null

conf() { # ROLE
  cat <<CONF
[server]
listen = 127.0.0.1:0
warehouse = s3://wh/staging
catalog = $FLOE_PG_URI
role = $1
maintain = false
[defaults]
seal_bytes = 32KB
seal_age = 300ms
compact_bytes = 1KB
compact_age = 1s
[table shop.events]
schema = $tmp/schema.json
partition = event_type
CONF
}
conf ingest > "$tmp/ingest.conf"
conf compactor > "$tmp/work.conf"

"$FLOE" serve --config "$tmp/ingest.conf" --node-id i1 --wal-dir "$tmp/wal" \
  --port-file "$tmp/port" 2> "$tmp/ingest.log" &
ing=$!
pids+=($ing)
for _ in $(seq 600); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || fail "the ingest node did not start"
# ten posts of 400 events, each sealed by a flush: ten landing files or more
split -l 400 -d "$tmp/events.ndjson" "$tmp/chunk-"
for c in "$tmp"/chunk-*; do
  python3 "$SERVE_DIR/client.py" --port-file "$tmp/port" \
    --events "$c" --table shop.events --clients 1 --batch-size 400 \
    --out "$tmp/acks" > /dev/null || fail "client"
  curl -sf -XPOST "http://127.0.0.1:$(cat "$tmp/port")/v1/admin/flush" > /dev/null || fail "flush"
done
kill -TERM $ing; wait $ing || fail "ingest node: exit $?"
files=$(pg_sql "SELECT COUNT(*) FROM landing_files WHERE kind=1")
[ "$files" -ge 8 ] || fail "only $files landing files (want 8 or more)"

stats() { curl -sf "http://127.0.0.1:$S3SIG_PORT/__admin/stats$1"; }
stats "?reset-in-flight=1" > /dev/null || fail "S3 server stats"
FLOE_LOG=debug "$FLOE" work --config "$tmp/work.conf" --node-id w1 2> "$tmp/work.log" &
w=$!
pids+=($w)
for _ in $(seq 600); do
  [ "$(landing_uncommitted)" = 0 ] && break
  kill -0 $w 2>/dev/null || fail "the worker exited"
  sleep 0.2
done
[ "$(landing_uncommitted)" = 0 ] || fail "$(landing_uncommitted) of $files landing files not committed"
kill -TERM $w; wait $w || fail "worker: exit $?"

in_flight=$(stats "" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).inFlightMax))')
heads=$(grep -o 'object store requests GET [0-9]* PUT [0-9]* LIST [0-9]* DELETE [0-9]* HEAD [0-9]*' "$tmp/work.log" |
  tail -1 | awk '{print $13}')
[ -n "$heads" ] || fail "the worker logged no request counts"
echo "serve_staging: $files landing files; at most $in_flight requests at once; worker HEAD requests: $heads"
[ "$in_flight" -ge 3 ] || fail "at most $in_flight request(s) at once while the worker staged $files landing files (want 3 or more: concurrent copies)"
[ "$heads" -lt "$files" ] || fail "$heads HEAD requests for $files landing files (want fewer: no HEAD per file)"
[ "$(s3sig_failures)" = 0 ] || fail "$(s3sig_failures) requests with a bad signature"
parts=$(pg_sql "SELECT COUNT(DISTINCT part) FROM landing_files WHERE kind=1")
ahead=$(grep -c 'claimed ahead, prepared while' "$tmp/work.log" || true)
echo "serve_staging: $parts partitions, $ahead claimed and staged while the one before converted"
[ "$parts" -ge 2 ] || fail "$parts partition(s) (want several)"
[ "$ahead" -ge 1 ] || fail "no partition was claimed and staged while another converted"

export FLOE_CATALOG_URI=$FLOE_PG_URI FLOE_WAREHOUSE=s3://wh/staging
"$FLOE" scan shop.events --format canonical > "$tmp/got.ndjson" 2> "$tmp/scan.err" ||
  fail "scan: $(cat "$tmp/scan.err")"
[ "$(wc -l < "$tmp/got.ndjson")" = 4000 ] || fail "$(wc -l < "$tmp/got.ndjson") rows, want 4000"
[ "$(grep -o '"event_id":"[^"]*"' "$tmp/got.ndjson" | sort -u | wc -l)" = 4000 ] ||
  fail "duplicate or missing event ids in the table"
echo "serve_staging: ok"
