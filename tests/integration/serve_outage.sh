#!/usr/bin/env bash
# serve_outage.sh - an ingest node (PostgreSQL catalog + s3:// warehouse, the S3 server
# behind a proxy that is stopped and started to take S3 down and up) starts while both
# services are down, and catches up when they return (issue 27 item 4):
#   1. with both up: batch A (keyless) and batch K (Idempotency-Key k1) are acknowledged;
#      kill -9: both are only in the WAL (nothing sealed: seal_age 1h).
#   2. PostgreSQL stopped, the S3 proxy stopped: floe serve starts anyway. /healthz 200
#      "degraded" naming the catalog, the object store and the sealer; /metrics
#      floe_offline 1 and floe_up{subsystem="catalog"} 0. Batch B (keyless) is taken; a
#      keyed post (k2) and the retry of k1 get 503 + Retry-After (fail closed); a flush 503.
#   3. PostgreSQL back, S3 still down: still offline, keyed posts still 503.
#   4. S3 back: the node finishes its start by itself (/healthz "ok", floe_offline 0); the
#      retry of k1 gets k1's first answer byte for byte, k2 is taken; a flush with
#      wait=true commits everything, and the table holds A, K, B and k2's batch exactly
#      once (nothing of the WAL lost or doubled). A clean stop exits 0. The S3 server saw
#      no bad signature.
# Skips (exit 77) when PostgreSQL's server binaries are missing.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
serve_pg_s3

# S3 up: the proxy listens on a fixed port (the first run picks it); down: no listener.
# The proxy is the only process in pids (cleanup stops the one that runs).
proxy_port=0
proxy_up() {
  rm -f "$tmp/proxy.port"
  node "$js/s3_fault_proxy.mjs" --target "127.0.0.1:$S3SIG_PORT" --port "$proxy_port" \
    > "$tmp/proxy.port" 2>> "$tmp/proxy.err" &
  proxy=$!
  pids=("$proxy")
  for _ in $(seq 100); do [ -s "$tmp/proxy.port" ] && break; sleep 0.1; done
  proxy_port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' \
    "$tmp/proxy.port") || fail "the S3 proxy did not start: $(cat "$tmp/proxy.err")"
}
proxy_down() { kill "$proxy"; wait "$proxy" 2>/dev/null || true; proxy=; pids=(); }
pg_down() {
  "${PG_RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m fast -w stop > /dev/null ||
    fail "stopping PostgreSQL"
}
proxy_up
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$proxy_port

post() { # FILE [KEY] -> HTTP code; the answer in $tmp/out, the headers in $tmp/hdr
  local key=()
  [ -n "${2:-}" ] && key=(-H "Idempotency-Key: $2")
  curl -s -o "$tmp/out" -D "$tmp/hdr" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/shop.events/events" -H 'Content-Type: application/x-ndjson' \
    "${key[@]}" --data-binary "@$1"
}
health() { curl -s -o "$tmp/health" -w '%{http_code}' "http://127.0.0.1:$port/healthz"; }
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

"$FLOE" gen --schema-out "$tmp/schema.json" > /dev/null
"$FLOE" gen --count 4000 --seed 27 -o "$tmp/events.ndjson" > /dev/null
split -l 1000 -d -a 1 "$tmp/events.ndjson" "$tmp/batch."  # A=0 K=1 B=2 C=3
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
role = ingest
warehouse = s3://wh/w
catalog = $FLOE_PG_URI
wal_dir = $tmp/wal
node_id = n1
[defaults]
seal_bytes = 64MB
seal_age = 1h
[table shop.events]
schema = $tmp/schema.json
partition = event_type
CONF

# ---- 1. both services up: A and K acknowledged, then kill -9 (only in the WAL)
start_server --config "$tmp/serve.conf"
[ "$(post "$tmp/batch.0")" = 200 ] || fail "batch A: $(head -c 300 "$tmp/out")"
[ "$(post "$tmp/batch.1" k1)" = 200 ] || fail "batch K: $(head -c 300 "$tmp/out")"
cp "$tmp/out" "$tmp/k1.first"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
[ -n "$(ls "$tmp/wal"/wal-*.log)" ] || fail "no WAL segment after the kill"

# ---- 2. both down: the node starts, takes keyless posts, refuses keyed ones
pg_down
proxy_down
start_server --config "$tmp/serve.conf"
code=$(health)
[ "$code" = 200 ] || fail "/healthz while offline: HTTP $code $(cat "$tmp/health")"
python3 - "$tmp/health" <<'PY' || fail "/healthz while offline: $(cat "$tmp/health")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["status"] == "degraded", h["status"]
c = h["checks"]
assert c["wal"]["ok"] is True, c["wal"]
assert c["sealer"]["ok"] is False and "cannot be reached" in c["sealer"]["error"], c["sealer"]
PY
for _ in $(seq 100); do  # the prober asks every 2 s
  health > /dev/null
  grep -q '"catalog":{"ok":false' "$tmp/health" && grep -q '"object_store":{"ok":false' "$tmp/health" && break
  sleep 0.1
done
grep -q '"catalog":{"ok":false' "$tmp/health" || fail "/healthz does not name the catalog: $(cat "$tmp/health")"
grep -q '"object_store":{"ok":false' "$tmp/health" || fail "/healthz does not name the object store: $(cat "$tmp/health")"
[ "$(metric floe_offline)" = 1 ] || fail "floe_offline is $(metric floe_offline) while offline"
[ "$(metric 'floe_up{subsystem="catalog"}')" = 0 ] || fail "floe_up{catalog} while PostgreSQL is down"
[ "$(post "$tmp/batch.2")" = 200 ] || fail "keyless batch B while offline: $(head -c 300 "$tmp/out")"
grep -q '"accepted":1000' "$tmp/out" || fail "batch B answer: $(head -c 300 "$tmp/out")"
[ "$(post "$tmp/batch.3" k2)" = 503 ] || fail "keyed batch while offline not refused: $(head -c 300 "$tmp/out")"
grep -qi '^Retry-After: [0-9]' "$tmp/hdr" || fail "503 without Retry-After"
[ "$(post "$tmp/batch.1" k1)" = 503 ] || fail "retry of k1 while offline not refused: $(head -c 300 "$tmp/out")"
code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1")
[ "$code" = 503 ] || fail "flush while offline: HTTP $code $(head -c 300 "$tmp/out")"
echo "serve_outage: started with PostgreSQL and S3 down: keyless posts taken, keyed 503"

# ---- 3. PostgreSQL back, S3 still down: still offline
pg_resume || fail "starting PostgreSQL again"
sleep 4
[ "$(metric floe_offline)" = 1 ] || fail "online again while S3 is down"
[ "$(post "$tmp/batch.3" k2)" = 503 ] || fail "keyed batch with S3 down not refused"

# ---- 4. S3 back: the node catches up by itself
proxy_up
for _ in $(seq 300); do
  [ "$(metric floe_offline)" = 0 ] && break
  sleep 0.1
done
[ "$(metric floe_offline)" = 0 ] || fail "still offline 30 s after the services returned"
for _ in $(seq 100); do
  health > /dev/null
  grep -q '"status":"ok"' "$tmp/health" && break
  sleep 0.1
done
grep -q '"status":"ok"' "$tmp/health" || fail "/healthz after the services returned: $(cat "$tmp/health")"
[ "$(post "$tmp/batch.1" k1)" = 200 ] || fail "retry of k1 after catching up: $(head -c 300 "$tmp/out")"
cmp -s "$tmp/out" "$tmp/k1.first" || fail "the retry of k1 got a new answer: $(head -c 300 "$tmp/out")"
[ "$(post "$tmp/batch.3" k2)" = 200 ] || fail "keyed batch after catching up: $(head -c 300 "$tmp/out")"
flush_wait
stop_server

FLOE_CATALOG_URI=$FLOE_PG_URI FLOE_WAREHOUSE=s3://wh/w "$FLOE" scan shop.events \
  --columns event_id > "$tmp/got.ndjson" 2> "$tmp/scan.err" || fail "scan: $(cat "$tmp/scan.err")"
python3 - "$tmp/events.ndjson" "$tmp/got.ndjson" <<'PY' || fail "table content"
import collections, json, sys
want = collections.Counter(json.loads(l)["event_id"] for l in open(sys.argv[1]) if l.strip())
got = collections.Counter(json.loads(l)["event_id"] for l in open(sys.argv[2]) if l.strip())
if got != want:
    sys.exit(f"table: {sum(got.values())} rows, want {sum(want.values())}; missing "
             f"{sum((want - got).values())}, doubled {sum((got - want).values())}")
print(f"serve_outage: the table holds the {sum(want.values())} acknowledged events exactly once")
PY
n=$(s3sig_failures)
[ "$n" = 0 ] || fail "$n S3 requests with a bad signature"
echo "serve_outage: ok"
