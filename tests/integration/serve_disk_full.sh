#!/usr/bin/env bash
# floe serve with its WAL on a 1 MB tmpfs that fills up (issue 10 part 3, SECURITY.md 6):
# keyed batches are acknowledged until the WAL cannot write; from then on every post gets
# 503 with Retry-After (never a 200 for something not durable), and the server stays up
# (/healthz answers). Once space returns (the tmpfs is grown) and the server is restarted
# after a kill -9, the refused batch is retried with its key and acknowledged, and after a
# flush the table holds every acknowledged event exactly once and nothing else.
# Needs root for `mount -t tmpfs`; prints a SKIPPED line and exits 0 where not allowed.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
mnt=$tmp/mnt
mkdir -p "$mnt"
cleanup_mnt() {
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  pid=
  if mountpoint -q "$mnt"; then umount "$mnt"; fi
  cleanup
}
trap cleanup_mnt EXIT
if ! mount -t tmpfs -o size=1m tmpfs "$mnt" 2> "$tmp/mount.err"; then
  echo "serve_disk_full: SKIPPED (1 test): cannot mount a tmpfs here: $(cat "$tmp/mount.err")"
  exit 0
fi

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
# the WAL refuses every later frame until a restart; the server itself stays up
[ "$(post $((refused + 1)))" = 503 ] || fail "a post after the disk filled was not refused"
curl -s -o /dev/null "http://127.0.0.1:$port/healthz" || fail "server down after the disk filled"
echo "serve_disk_full: $acked batches acknowledged, batch $refused refused with 503 + Retry-After"

# space returns; the operator restarts the server (here the hard way)
mount -o remount,size=64m "$mnt"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
start_server --config "$tmp/serve.conf"
for i in $(seq "$refused" $((refused + 2))); do
  code=$(post "$i")
  [ "$code" = 200 ] || fail "batch $i after space returned: HTTP $code $(head -c 200 "$tmp/out")"
done
last=$((refused + 2))
curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" >/dev/null || fail "flush"
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
