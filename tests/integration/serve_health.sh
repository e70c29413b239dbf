#!/usr/bin/env bash
# floe serve: /healthz reports each part (SECURITY.md section 6). The landing folder is a
# small tmpfs that fills up: sealing fails, so /healthz answers 200 "degraded" (posts are
# still taken into the WAL) with the sealer failing and its error naming the partition,
# /metrics floe_up{subsystem="sealer"} 0; without a token the error text is withheld (it
# names tables and paths), with the metrics grant it is shown. Once the tmpfs is grown the
# sealer catches up by itself and /healthz is "ok" again; every acknowledged record is in a
# landing file. Needs root for `mount -t tmpfs`; prints a SKIPPED line and exits 77 (ctest:
# skipped) where not allowed.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
land=$tmp/wh/_landing
mount_tmpfs "$land" 64k
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 2000 --seed 4 -o "$tmp/events.ndjson" >/dev/null
split -l 200 -d -a 2 "$tmp/events.ndjson" "$tmp/batch."
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
landing_codec = none
[defaults]
seal_bytes = 20KB
seal_age = 1h
compact_bytes = 1GB
compact_age = 1h
[table shop.events]
schema = $tmp/schema.json
[token writer]
secret = writer-secret-1
grants = shop.*
[token prom]
secret = prom-secret-22
grants = metrics
CONF
start_server --config "$tmp/serve.conf"
url="http://127.0.0.1:$port"
health() { curl -s -o "$tmp/health" -w '%{http_code}' "$url/healthz" "$@"; }
for i in $(seq 0 9); do
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "$url/v1/tables/shop.events/events" \
    -H 'Authorization: Bearer writer-secret-1' -H 'Content-Type: application/x-ndjson' \
    --data-binary "@$tmp/batch.0$i")
  [ "$code" = 200 ] || fail "batch $i while the landing folder is full: HTTP $code $(head -c 200 "$tmp/out")"
done
for _ in $(seq 100); do
  health -H 'Authorization: Bearer prom-secret-22' >/dev/null
  grep -q '"sealer":{"ok":false' "$tmp/health" && break
  sleep 0.1
done
code=$(health -H 'Authorization: Bearer prom-secret-22')
[ "$code" = 200 ] || fail "/healthz with a failing sealer: HTTP $code, want 200 (posts are taken)"
python3 - "$tmp/health" <<'PY' || fail "/healthz body: $(cat "$tmp/health")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["status"] == "degraded", h["status"]
s = h["checks"]["sealer"]
assert s["ok"] is False and s["failures"] >= 1 and s["since"], s
assert "shop.events" in s["error"] and "no space left" in s["error"].lower(), s["error"]
assert h["checks"]["wal"]["ok"] is True
PY
health >/dev/null
python3 - "$tmp/health" <<'PY' || fail "/healthz without a token shows the error text: $(cat "$tmp/health")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["status"] == "degraded" and h["checks"]["sealer"]["ok"] is False
assert "error" not in h["checks"]["sealer"]
PY
up=$(curl -s "$url/metrics" -H 'Authorization: Bearer prom-secret-22' |
  awk '$1 == "floe_up{subsystem=\"sealer\"}" {print $2}')
[ "$up" = 0 ] || fail "floe_up{subsystem=\"sealer\"} is $up while sealing fails"
echo "serve_health: sealing fails on a full landing folder: /healthz degraded, posts taken"

# room again: the sealer catches up by itself
mount -o remount,size=64m "$land"
for _ in $(seq 150); do
  health >/dev/null
  grep -q '"status":"ok"' "$tmp/health" && break
  sleep 0.1
done
grep -q '"status":"ok"' "$tmp/health" || fail "/healthz after room returned: $(cat "$tmp/health")"
stop_server
n=$(find "$land/shop.events" -name '*.ndjson' -exec cat {} + | wc -l)
[ "$n" = 2000 ] || fail "landing files hold $n records, want 2000"
echo "serve_health: ok"
