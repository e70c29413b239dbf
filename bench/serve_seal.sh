#!/usr/bin/env bash
# bench/serve_seal.sh FLOE N - how long floe serve takes to seal N one-record partitions:
# a table partitioned by identity on a string, N events of N distinct partitions posted
# 10,000 a post (PER), then POST /v1/admin/flush; the time is until
# floe_landing_files_sealed_total reaches N. STOP=1: SIGTERM instead, timed until the
# process exits. Working folder under RUNDIR (default TMPDIR or /tmp), removed at the end.
# Prints one line: binary, N, post and seal seconds, files on disk, load average.
set -euo pipefail
FLOE=$1; N=$2; PER=${PER:-10000}
tmp=$(mktemp -d "${RUNDIR:-${TMPDIR:-/tmp}}/serve_seal.XXXX")
cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"p","required":false,"type":"string"}]}
JSON
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
buffer_cap = 2GiB
max_request_partitions = 100000
[defaults]
seal_age = 1h
compact_age = 1h
compact_bytes = 10GB
[table t.e]
schema = $tmp/schema.json
partition = p
CONF
"$FLOE" serve --config "$tmp/serve.conf" --port-file "$tmp/port" 2> "$tmp/server.log" &
pid=$!
trap 'kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 600); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port")
t0=$(date +%s.%N)
for ((j = 0; j * PER < N; j++)); do
  python3 -c "
import sys
j, per, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sys.stdout.write(''.join('{\"id\":%d,\"p\":\"q%d\"}\n' % (i, i) for i in range(j*per, min(n, (j+1)*per))))
" "$j" "$PER" "$N" > "$tmp/body.ndjson"
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "http://127.0.0.1:$port/v1/tables/t.e/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary "@$tmp/body.ndjson")
  [ "$code" = 200 ] || { echo "post $j: $code $(head -c 300 "$tmp/out")"; exit 1; }
done
t1=$(date +%s.%N)
if [ -n "${STOP:-}" ]; then
  kill -TERM $pid; wait $pid || true
else
  curl -s -o /dev/null -XPOST "http://127.0.0.1:$port/v1/admin/flush" --max-time 3000 || true
  while :; do
    n=$(curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "floe_landing_files_sealed_total" {print $2}')
    [ "${n:-0}" -ge "$N" ] && break
    sleep 0.5
  done
fi
t2=$(date +%s.%N)
files=$(find "$tmp/wh/_landing" -type f | wc -l)
echo "$(basename "$FLOE") N=$N post=$(echo "$t1 - $t0" | bc) s seal=$(echo "$t2 - $t1" | bc) s files=$files load=$(cut -d' ' -f1-3 /proc/loadavg)"
