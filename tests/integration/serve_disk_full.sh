#!/usr/bin/env bash
# floe serve with its WAL on a 1 MB tmpfs that fills up (issue 10 part 3, SECURITY.md 6):
# keyed batches are acknowledged until the WAL cannot write; from then on every post gets
# 503 with Retry-After (never a 200 for something not durable), and the server stays up:
# /healthz answers 503 naming the WAL and the error, /metrics floe_up{subsystem="wal"} 0.
# Once space returns (the tmpfs is grown) the WAL recovers by itself within seconds, no
# restart: /healthz is ok again, the refused batch is retried with its key and
# acknowledged; then a kill -9 and a restart (WAL replay), one more batch, and after a
# flush the table holds every acknowledged event exactly once and nothing else.
# Needs root for `mount -t tmpfs`; prints a SKIPPED line and exits 77 (ctest: skipped)
# where not allowed.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
mnt=$tmp/mnt
mount_tmpfs "$mnt" 1m

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 40000 --seed 21 -o "$tmp/events.ndjson" >/dev/null
split -l 200 -d -a 3 "$tmp/events.ndjson" "$tmp/batch."
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
wal_dir = $mnt/wal
wal_segment_size = 256KB
[defaults]
seal_bytes = 1GB
seal_age = 1h
compact_bytes = 1GB
compact_age = 1h
[table shop.events]
schema = $tmp/schema.json
CONF
start_server --config "$tmp/serve.conf"
post() { # post N -> HTTP status; headers in $tmp/hdr, body in $tmp/out
  curl -s -D "$tmp/hdr" -o "$tmp/out" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/shop.events/events" -H 'Content-Type: application/x-ndjson' \
    -H "Idempotency-Key: full-$1" --data-binary "@$tmp/batch.$(printf %03d "$1")"
}
acked=0 refused=
for i in $(seq 0 199); do
  code=$(post "$i")
  case $code in
    200) acked=$((acked + 1)) ;;
    503) refused=$i; break ;;
    *) fail "batch $i: HTTP $code $(head -c 200 "$tmp/out")" ;;
  esac
done
[ -n "$refused" ] || fail "the 1 MB WAL never filled ($acked batches acknowledged)"
[ "$acked" -gt 0 ] || fail "nothing acknowledged before the WAL filled"
grep -qi '^Retry-After: [0-9]' "$tmp/hdr" || fail "503 without Retry-After"
grep -q '"status":503' "$tmp/out" || fail "503 body: $(head -c 200 "$tmp/out")"
# the WAL refuses every later frame while it cannot write; the server itself stays up and
# says what is wrong
[ "$(post $((refused + 1)))" = 503 ] || fail "a post after the disk filled was not refused"
code=$(curl -s -o "$tmp/health" -w '%{http_code}' "http://127.0.0.1:$port/healthz")
[ "$code" = 503 ] || fail "/healthz while the WAL cannot write: HTTP $code $(cat "$tmp/health")"
python3 - "$tmp/health" <<'PY' || fail "/healthz body: $(cat "$tmp/health")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["status"] == "failing", h["status"]
w = h["checks"]["wal"]
assert w["ok"] is False and "no space left" in w["error"].lower(), w
assert all(c["ok"] for k, c in h["checks"].items() if k != "wal"), h["checks"]
PY
up=$(curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "floe_up{subsystem=\"wal\"}" {print $2}')
[ "$up" = 0 ] || fail "floe_up{subsystem=\"wal\"} is $up while the WAL cannot write"
echo "serve_disk_full: $acked batches acknowledged, batch $refused refused with 503 + Retry-After"

# space returns: the WAL recovers by itself (no restart), /healthz says so
mount -o remount,size=64m "$mnt"
for _ in $(seq 150); do
  code=$(curl -s -o "$tmp/health" -w '%{http_code}' "http://127.0.0.1:$port/healthz")
  [ "$code" = 200 ] && break
  sleep 0.1
done
[ "$code" = 200 ] || fail "the WAL did not recover within 15 s of space returning: $(cat "$tmp/health")"
grep -q '"status":"ok"' "$tmp/health" || fail "/healthz after recovery: $(cat "$tmp/health")"
rec=$(curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "floe_wal_recoveries_total" {print $2}')
[ "${rec:-0}" -ge 1 ] || fail "floe_wal_recoveries_total $rec"
for i in $(seq "$refused" $((refused + 1))); do
  code=$(post "$i")
  [ "$code" = 200 ] || fail "batch $i after space returned: HTTP $code $(head -c 200 "$tmp/out")"
done
# and a crash after the recovery loses nothing: kill -9, restart (the WAL is replayed)
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
start_server --config "$tmp/serve.conf"
code=$(post $((refused + 2)))
[ "$code" = 200 ] || fail "batch $((refused + 2)) after the restart: HTTP $code $(head -c 200 "$tmp/out")"
last=$((refused + 2))
flush_wait
stop_server
want=$(( (last + 1) * 200 ))
FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=default \
  "$FLOE" scan shop.events --columns event_id > "$tmp/ids" || fail "scan"
rows=$(wc -l < "$tmp/ids")
distinct=$(sort -u "$tmp/ids" | wc -l)
expected=$(head -n "$want" "$tmp/events.ndjson" | python3 -c '
import json, sys
print("\n".join(sorted(json.dumps({"event_id": json.loads(l)["event_id"]}, separators=(",", ":")) for l in sys.stdin)))')
[ "$rows" = "$want" ] || fail "table has $rows rows, want $want (batches 0..$last once each)"
[ "$distinct" = "$want" ] || fail "table has $rows rows but $distinct distinct event_ids"
sort "$tmp/ids" | cmp -s - <(echo "$expected") || fail "table event_ids differ from batches 0..$last"
echo "serve_disk_full: ok"
