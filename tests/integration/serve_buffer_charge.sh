#!/usr/bin/env bash
# floe serve's buffer_cap counts what the partition buffers hold in memory, not only the
# (compressed) bytes of their records:
#   1. posts of 1,000 records of 1,000 distinct
#      partitions each (one tiny record a partition), buffer_cap 2 MiB: a buffer's own
#      memory (structure, keys, data capacity, segment list) is counted, so the server
#      answers 503 + Retry-After long before 30,000 partitions are buffered. (Before: the
#      ~50 LZ4 bytes of each record were counted: 270,000 partitions were taken at 14.8 MB
#      counted, buffer_cap 32 MiB, while the server's RSS grew from 11 to 197 MiB.)
#   2. rejected records (quarantine sections, decoded in the buffer) sealed by a flush
#      leave floe_buffered_bytes at 0, not below. (Before: -3.4 MB after 9,000 rejected
#      records - the decoded bytes subtracted where the compressed ones were added - and
#      the count went further below zero at every flush, lifting buffer_cap by as much.)
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"p","required":false,"type":"string"}]}
JSON
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
buffer_cap = 2MiB
max_request_partitions = 100000
[defaults]
seal_age = 1h
[table t.e]
schema = $tmp/schema.json
partition = p
CONF
start_server --config "$tmp/serve.conf"
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
post() {
  curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "http://127.0.0.1:$port/v1/tables/t.e/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary "@$1"
}

# 1. distinct partitions until the server says 503 (at most 30,000)
refused=
for j in $(seq 0 29); do
  python3 -c "
import sys
j = int(sys.argv[1])
sys.stdout.write(''.join('{\"id\":%d,\"p\":\"q%d_%d\"}\n' % (i, j, i) for i in range(1000)))
" "$j" > "$tmp/body.ndjson"
  code=$(post "$tmp/body.ndjson")
  if [ "$code" = 503 ]; then refused=$j; break; fi
  [ "$code" = 200 ] || fail "post $j: HTTP $code $(head -c 300 "$tmp/out")"
done
buffered=$(metric floe_buffered_bytes)
[ -n "$refused" ] ||
  fail "30,000 partitions buffered under buffer_cap 2 MiB, counted as $buffered bytes"
# each buffer costs a few hundred bytes: 2 MiB is full after 2,000 to 10,000 of them
[ "$refused" -ge 2 ] || fail "refused already at post $refused ($buffered bytes counted)"
[ "$buffered" -ge $((2 << 20)) ] && [ "$buffered" -le $((3 << 20)) ] ||
  fail "floe_buffered_bytes $buffered after the 503 (cap 2 MiB)"
echo "partitions: 503 at post $refused ($((refused * 1000)) partitions, $buffered bytes counted)"
# (sealing thousands of one-record landing files takes long: a fresh server for part 2)
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=
rm -rf "$tmp/wh"
start_server --config "$tmp/serve.conf"

# 2. rejected records through the quarantine, three times
python3 -c "
import sys
sys.stdout.write(''.join('{\"id\":\"bad%d\",\"p\":\"a\"}\n' % i for i in range(3000)))
" > "$tmp/bad.ndjson"
for k in 1 2 3; do
  code=$(post "$tmp/bad.ndjson")
  [ "$code" = 200 ] && grep -q '"rejected":3000' "$tmp/out" ||
    fail "rejected post: HTTP $code $(head -c 300 "$tmp/out")"
  flush_wait
done
wait_for 30 '[ "$(metric floe_buffered_bytes)" = 0 ]' ||
  fail "floe_buffered_bytes $(metric floe_buffered_bytes) after three flushes of rejected records"
[ "$(find "$tmp/wh/_quarantine" -type f | wc -l)" -ge 1 ] || fail "no quarantine file"
stop_server
echo "serve_buffer_charge: OK"
