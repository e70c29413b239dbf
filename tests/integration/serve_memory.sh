#!/usr/bin/env bash
# floe serve with large bodies and under hostile clients, with the default limits (max_body 16 MiB, max_decoded
# 64 MiB, max_inflight_bytes 256 MiB); SECURITY.md section 6. Peak RSS is the server's
# VmHWM; the bound is max_inflight_bytes plus what the idle server and the sanitizer
# (shadow memory, redzones) take, measured before the attack.
#   1. 60 connections each announce and send 16 MiB and stall before the last byte: the
#      budget takes as many as fit, the others are answered 503 + Retry-After before their
#      body is read; /metrics shows the bytes held (floe_inflight_bytes); a 16 MiB post is
#      refused the same way while a small one is still taken; once read_timeout
#      cuts the stalled ones off, a normal post is taken. (Before the budget: 980 MiB
#      held, floe_buffered_bytes 0.)
#   2. 24 gzip posts of ~64 KB at once, each decoding to 63 MiB: decoded as they arrive,
#      every decoded byte taken from the budget; those that do not fit are answered 503 +
#      Retry-After, the others taken; every answer is 200 or 503. (Before: 1.57 GB.)
#   3. max_connections (16 here) slow clients - trickling headers, then trickling bodies -
#      connected: normal clients still get through at once (the idlest or slowest
#      connection makes room: one is enough while they come one at a time), and /metrics
#      counts the connections dropped.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
ATTACK="python3 $SERVE_DIR/attack.py"

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 1 --seed 9 -o "$tmp/one.ndjson" >/dev/null
conf() {
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
read_timeout = $1
header_timeout = 10s
max_connections = $2
[table shop.events]
schema = $tmp/schema.json
CONF
}
# the sanitizer's quarantine would keep freed blocks resident: off for the server
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
hwm_mib() { awk '/^VmHWM:/ {printf "%d", $2 / 1024}' "/proc/$pid/status"; }
rss_mib() { awk '/^VmRSS:/ {printf "%d", $2 / 1024}' "/proc/$pid/status"; }
post_one() {
  curl -s -D "$tmp/hdr" -o "$tmp/out" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/shop.events/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary "@$tmp/one.ndjson"
}
budget=256

# 0. bodies of several shredding pieces (1 MiB each): NDJSON and a pretty-printed JSON
#    array, 20,000 records with every 10th rejected: the counts, the global index of every
#    listed error (the first 1000 of 2000), and every record in the table or quarantine
cat > "$tmp/paths.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"name","required":false,"type":"string"}]}
JSON
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
recs = []
for i in range(20000):
    v = "x%d" % i if i % 10 == 9 else i
    recs.append({"id": v, "name": "n%d" % (i % 7), "pad": "p" * 120})
with open(d + "/many.ndjson", "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
with open(d + "/many.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(r, indent=2) for r in recs) + "\n]\n")
PY
cat > "$tmp/pieces.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/whp
[table shop.paths]
schema = $tmp/paths.json
partition = name
schema_mode = ignore
CONF
start_server --config "$tmp/pieces.conf"
for f in many.ndjson many.json; do
  ct=application/x-ndjson
  [ "$f" = many.json ] && ct=application/json
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/shop.paths/events" -H "Content-Type: $ct" \
    --data-binary "@$tmp/$f")
  [ "$code" = 200 ] || fail "$f: HTTP $code $(head -c 300 "$tmp/out")"
  python3 - "$tmp/out" "$f" <<'PY' || fail "$f: answer"
import json, sys
a = json.load(open(sys.argv[1]))
assert a["accepted"] == 18000 and a["rejected"] == 2000, (a["accepted"], a["rejected"])
assert a["errors_listed"] == 1000 and len(a["errors"]) == 1000, a.get("errors_listed")
assert [e["index"] for e in a["errors"]] == list(range(9, 10000, 10)), sys.argv[2]
assert all(e["reason"] == "type_mismatch" for e in a["errors"])
PY
done
flush_wait
stop_server
n=$(FLOE_CATALOG_URI="$tmp/whp/catalog.db" FLOE_WAREHOUSE="$tmp/whp" FLOE_CATALOG=default \
  "$FLOE" scan shop.paths --columns id | sort -u | wc -l)
[ "$n" = 18000 ] || fail "table holds $n distinct ids, want 18000"
q=$(cat "$tmp"/whp/_quarantine/shop.paths/*.ndjson | wc -l)
[ "$q" = 4000 ] || fail "quarantine holds $q records, want 4000"

# 1. stalled uploads (read_timeout long enough for every upload to arrive on a busy host)
conf 20s 256
start_server --config "$tmp/serve.conf"
[ "$(post_one)" = 200 ] || fail "warm-up post"
base=$(rss_mib)
bound=$((budget + base + budget / 8 + 48))
$ATTACK stall "$port" 60 $((16 << 20)) 30 shop.events > "$tmp/stall.txt" &
attack=$!
# while they stall: the budget is spent, and says so
for _ in $(seq 300); do
  held=$(metric floe_inflight_bytes)
  [ "${held:-0}" -ge $((240 << 20)) ] && break
  sleep 0.1
done
[ "${held:-0}" -ge $((240 << 20)) ] || fail "floe_inflight_bytes $held while 60 uploads stall"
[ "$held" -le $((budget << 20)) ] || fail "floe_inflight_bytes $held over the budget"
# a 16 MiB post does not fit any more (503 before its body is read); a small one does
head -c $((16 << 20)) /dev/zero | tr '\0' '\n' > "$tmp/blank16"
code=$(curl -s -D "$tmp/hdr" -o "$tmp/out" -w '%{http_code}' -XPOST \
  "http://127.0.0.1:$port/v1/tables/shop.events/events" \
  -H 'Content-Type: application/x-ndjson' --data-binary "@$tmp/blank16")
[ "$code" = 503 ] || fail "a 16 MiB post while the budget is spent: HTTP $code, want 503"
grep -qi '^Retry-After: [0-9]' "$tmp/hdr" || fail "503 without Retry-After"
grep -q 'max_inflight_bytes' "$tmp/out" || fail "503 does not name max_inflight_bytes: $(cat "$tmp/out")"
[ "$(post_one)" = 200 ] || fail "a small post while 60 uploads stall"
wait $attack
peak1=$(hwm_mib)
held=$(sort "$tmp/stall.txt" | uniq -c | tr '\n' ' ')
grep -qv '^\(held\|503\|408\)$' "$tmp/stall.txt" && fail "stalled uploads: unexpected outcome: $held"
n503=$(grep -c '^503$' "$tmp/stall.txt" || true)
[ "$n503" -ge 40 ] || fail "stalled uploads: only $n503 of 60 answered 503 early ($held)"
# read_timeout cut the stalled ones: the budget is back
# (what stays held is the idle request scratch kept for reuse, floe_scratch_pooled_bytes)
for _ in $(seq 300); do
  [ "$(metric floe_inflight_bytes)" = "$(metric floe_scratch_pooled_bytes)" ] && break
  sleep 0.1
done
[ "$(metric floe_inflight_bytes)" = "$(metric floe_scratch_pooled_bytes)" ] ||
  fail "budget not given back: $(metric floe_inflight_bytes), idle scratch $(metric floe_scratch_pooled_bytes)"
[ "$(post_one)" = 200 ] || fail "a post after the stalled uploads were cut off"
echo "serve_memory: 60 stalled 16 MiB uploads: $held; peak RSS $peak1 MiB (idle $base, bound $bound)"
[ "$peak1" -le "$bound" ] || fail "peak RSS $peak1 MiB with 60 stalled uploads (bound $bound)"
stop_server

# 2. gzip posts that decode to 63 MiB each
python3 - "$tmp/one.ndjson" "$tmp/big.gz" <<'PY'
import gzip, sys
rec = open(sys.argv[1], "rb").read()
with gzip.open(sys.argv[2], "wb", 9) as f:
    f.write(rec)
    blank = b"\n" * (1 << 20)
    for _ in range(63):
        f.write(blank)
PY
gz=$(stat -c %s "$tmp/big.gz")
conf 30s 256
start_server --config "$tmp/serve.conf"
[ "$(post_one)" = 200 ] || fail "warm-up post"
base=$(rss_mib)
bound=$((budget + base + budget / 8 + 48))
$ATTACK burst "$port" 24 "$tmp/big.gz" gzip shop.events > "$tmp/burst.txt"
peak2=$(hwm_mib)
outcome=$(sort "$tmp/burst.txt" | uniq -c | tr '\n' ' ')
grep -q 'retry-after-missing' "$tmp/burst.txt" && fail "gzip burst: 503 without Retry-After"
grep -qv '^\(200\|503\)$' "$tmp/burst.txt" && fail "gzip burst: unexpected answers: $outcome"
n200=$(grep -c '^200$' "$tmp/burst.txt" || true)
[ "$n200" -ge 1 ] || fail "gzip burst: none taken ($outcome)"
acc=$(metric 'floe_events_accepted_total{table="shop.events"}')
[ "$acc" = $((n200 + 1)) ] || fail "gzip burst: $acc events accepted, want $((n200 + 1))"
echo "serve_memory: 24 gzip posts of $gz bytes decoding to 63 MiB: $outcome; peak RSS $peak2 MiB (idle $base, bound $bound)"
[ "$peak2" -le "$bound" ] || fail "peak RSS $peak2 MiB with 24 gzip posts (bound $bound)"
stop_server

# 3. max_connections slow clients
conf 30s 16
start_server --config "$tmp/serve.conf"
for mode in headers body; do
  $ATTACK slow "$port" 16 "$mode" 8 > "$tmp/slow.txt" &
  attack=$!
  for _ in $(seq 100); do grep -q connected "$tmp/slow.txt" && break; sleep 0.1; done
  sleep 1.5 # past the grace a connection has before it can be dropped
  for i in $(seq 6); do
    code=$(curl -s -m 5 -o "$tmp/out" -w '%{http_code}' -XPOST \
      "http://127.0.0.1:$port/v1/tables/shop.events/events" \
      -H 'Content-Type: application/x-ndjson' --data-binary "@$tmp/one.ndjson" || true)
    [ "$code" = 200 ] || fail "normal client $i with 16 slow clients ($mode) connected: HTTP $code"
  done
  wait $attack
  cut=$(grep -c '^cut$' "$tmp/slow.txt" || true)
  [ "$cut" -ge 1 ] || fail "slow clients ($mode): none dropped"
  echo "serve_memory: 16 slow clients ($mode) connected: 6 normal posts taken, $cut slow ones dropped"
done
ev=$(metric floe_connections_evicted_total)
[ "${ev:-0}" -ge 2 ] || fail "floe_connections_evicted_total $ev"
stop_server
echo "serve_memory: ok"
