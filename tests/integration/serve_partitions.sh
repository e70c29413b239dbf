#!/usr/bin/env bash
# floe serve: the partitions of one request (SECURITY.md section 6).
#   1. Routing is linear in the records of a request, whatever the number of partitions:
#      with max_request_partitions raised, posts of 4,000 and 32,000 distinct partition
#      values (one record each) are timed in the same run; 8 times the partitions must not
#      take more than 20 times as long (a look-up per partition that scans the others,
#      quadratic, gave 27x and more). Peak RSS of the server stays under 160 MiB with
#      32,000 partitions in one request.
#   2. A request over max_request_partitions (here 1000, the default) is refused whole
#      with 413 and a message naming the setting; nothing of it is taken (the accepted
#      counter does not move, no landing file holds its records), and a 16 MiB body of
#      distinct partitions is refused the same way.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"name","required":false,"type":"string"}]}
JSON
# body N FILE [prefix]: N records, each of its own partition
body() {
  python3 - "$1" "$2" "${3:-p}" <<'PY'
import sys
n, path, prefix = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(path, "w") as f:
    for i in range(n):
        f.write('{"id":%d,"name":"%s%07d"}\n' % (i, prefix, i))
PY
}
conf() {
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh$1
max_request_partitions = $2
[defaults]
seal_bytes = 1GB
seal_age = 1h
compact_bytes = 1GB
compact_age = 1h
[table shop.parts]
schema = $tmp/schema.json
partition = name
CONF
}
post() { # post FILE -> "status seconds"
  curl -s -o "$tmp/out" -w '%{http_code} %{time_total}\n' -XPOST \
    "http://127.0.0.1:$port/v1/tables/shop.parts/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary "@$1"
}
accepted() {
  curl -s "http://127.0.0.1:$port/metrics" |
    awk '$1 == "floe_events_accepted_total{table=\"shop.parts\"}" {print $2}'
}
hwm_mib() { awk '/^VmHWM:/ {printf "%d", $2 / 1024}' "/proc/$pid/status"; }

# 1. linear routing
body 4000 "$tmp/b4k" a
body 32000 "$tmp/b32k" b
body 500 "$tmp/warm" w
conf 1 40000
start_server --config "$tmp/serve.conf"
read -r code _ < <(post "$tmp/warm")
[ "$code" = 200 ] || fail "warm-up post: HTTP $code $(head -c 200 "$tmp/out")"
read -r code t4 < <(post "$tmp/b4k")
[ "$code" = 200 ] || fail "4,000 partitions: HTTP $code $(head -c 200 "$tmp/out")"
read -r code t32 < <(post "$tmp/b32k")
[ "$code" = 200 ] || fail "32,000 partitions: HTTP $code $(head -c 200 "$tmp/out")"
grep -q '"accepted":32000,"rejected":0' "$tmp/out" || fail "32,000 partitions: $(head -c 200 "$tmp/out")"
peak=$(hwm_mib)
# (not stopped cleanly: sealing 36,500 one-record landing files, each fsynced and
# registered, is not what this part is about)
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
ratio=$(python3 -c "print('%.1f' % ($t32 / max($t4, 0.001)))")
echo "serve_partitions: 4,000 partitions in ${t4}s, 32,000 in ${t32}s (x$ratio for 8x the partitions), peak RSS $peak MiB"
python3 -c "import sys; sys.exit(0 if $t32 <= 20 * max($t4, 0.05) else 1)" ||
  fail "routing is not linear: 4,000 partitions ${t4}s, 32,000 partitions ${t32}s"
[ "$peak" -lt 160 ] || fail "peak RSS $peak MiB with 32,000 partitions in one request (bound 160)"

# 2. the per-request cap
conf 2 1000
start_server --config "$tmp/serve.conf"
body 1000 "$tmp/b1000" c
body 1001 "$tmp/b1001" d
read -r code _ < <(post "$tmp/b1000")
[ "$code" = 200 ] || fail "1,000 partitions (at the cap): HTTP $code $(head -c 200 "$tmp/out")"
read -r code _ < <(post "$tmp/b1001")
[ "$code" = 413 ] || fail "1,001 partitions: HTTP $code, want 413"
grep -q 'max_request_partitions' "$tmp/out" || fail "413 does not name the setting: $(head -c 300 "$tmp/out")"
python3 - "$tmp/b16m" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    i, n = 0, 0
    while n < 16 * 1024 * 1024 - 64:
        line = '{"id":%d,"name":"e%09d"}\n' % (i, i)
        f.write(line)
        n += len(line)
        i += 1
PY
read -r code _ < <(post "$tmp/b16m")
[ "$code" = 413 ] || fail "16 MiB of distinct partitions: HTTP $code, want 413"
[ "$(accepted)" = 1000 ] || fail "refused requests took events: accepted $(accepted), want 1000"
curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush" >/dev/null || fail "flush"
stop_server
landed=$(find "$tmp/wh2/_landing/shop.parts" -name '*.ndjson*' | wc -l)
[ "$landed" = 1000 ] || fail "landing files: $landed, want 1000 (one per accepted partition)"
! find "$tmp/wh2/_landing/shop.parts" -path '*name=d*' | grep -q . || fail "a refused request left landing files"
echo "serve_partitions: ok"
