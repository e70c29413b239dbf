#!/usr/bin/env bash
# floe serve seals thousands of one-record partitions at once in about the time of a few:
# 3,000 events of 3,000 distinct partitions (identity on a string id) in one post, then
# POST /v1/admin/flush.
#   1. The flush answers 200 within 10 s, and the sealer makes far fewer syncs than files
#      (under strace, when it can trace here: fsync + fdatasync + syncfs during the flush
#      < 300). Before: every landing file was fsynced, then its folder, then registered in
#      its own index commit (a fdatasync of the SQLite WAL) - three device flushes a
#      partition, 9,000+ syncs here; 15,000 partitions took over a minute to flush, and a
#      server stopped with 270,000 such buffers was still sealing after 20 minutes.
#   2. Every file is registered once: the index counts 3,000 pending landing files, and a
#      server killed (-9) after the flush and started again seals nothing more (the WAL
#      replay skips every frame the batch registered).
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
N=3000

cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"p","required":false,"type":"string"}]}
JSON
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
max_request_partitions = 100000
[defaults]
seal_age = 1h
compact_age = 1h
compact_bytes = 10GB
[table t.e]
schema = $tmp/schema.json
partition = p
CONF
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# the server under strace when strace can trace here (its syncs counted), else as is
traced=
if command -v strace > /dev/null &&
   strace -f -qq --seccomp-bpf -e trace=fsync -o /dev/null true 2> /dev/null; then
  traced=1
  strace -f -qq --seccomp-bpf -e trace=fsync,fdatasync,syncfs -o "$tmp/sync.trace" \
    "$FLOE" serve --config "$tmp/serve.conf" --port-file "$tmp/port" 2>> "$tmp/server.log" &
  spid=$!
  pids+=("$spid")
  wait_for 30 '[ -s "$tmp/port" ]' || fail "server did not start under strace"
  pid=$(pgrep -P "$spid" | head -1 || true)
  [ -n "$pid" ] || fail "no floe process under strace $spid"
  port=$(cat "$tmp/port")
else
  echo "serve_seal_many: strace cannot trace here: the sync count is not checked"
  start_server --config "$tmp/serve.conf"
fi

python3 -c "
import sys
sys.stdout.write(''.join('{\"id\":%d,\"p\":\"k%d\"}\n' % (i, i) for i in range($N)))
" > "$tmp/body.ndjson"
code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST \
  "http://127.0.0.1:$port/v1/tables/t.e/events" -H 'Content-Type: application/x-ndjson' \
  --data-binary "@$tmp/body.ndjson")
[ "$code" = 200 ] || fail "post: HTTP $code $(head -c 300 "$tmp/out")"

# 1. the flush: in time, and with few syncs
before=0
if [ -n "$traced" ]; then before=$(wc -l < "$tmp/sync.trace"); fi
t0=$(date +%s%N)
code=$(curl -s -o "$tmp/flush.out" -w '%{http_code}' --max-time 120 -XPOST \
  "http://127.0.0.1:$port/v1/admin/flush" || true)
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$code" = 200 ] || fail "flush: HTTP $code after $ms ms $(head -c 300 "$tmp/flush.out")"
[ "$ms" -le 10000 ] || fail "flush of $N one-record partitions took $ms ms (at most 10 s)"
syncs=
if [ -n "$traced" ]; then
  syncs=$(($(wc -l < "$tmp/sync.trace") - before))
  [ "$syncs" -lt 300 ] || fail "$syncs syncs to seal $N one-record partitions (< 300)"
fi
sealed=$(metric floe_landing_files_sealed_total)
[ "$sealed" = "$N" ] || fail "floe_landing_files_sealed_total $sealed after the flush ($N)"
echo "flush: $N partitions sealed in $ms ms, ${syncs:-?} syncs"

# 2. registered once: pending in the index, and nothing sealed again after a kill -9
wait_for 30 '[ "$(metric floe_pending_landing_files)" = "$N" ]' ||
  fail "floe_pending_landing_files $(metric floe_pending_landing_files) (want $N)"
kill -9 "$pid"
if [ -n "$traced" ]; then wait "$spid" 2> /dev/null || true; else wait "$pid" 2> /dev/null || true; fi
pid=
start_server --config "$tmp/serve.conf"
code=$(curl -s -o "$tmp/flush.out" -w '%{http_code}' --max-time 120 -XPOST \
  "http://127.0.0.1:$port/v1/admin/flush" || true)
[ "$code" = 200 ] || fail "flush after the restart: HTTP $code $(head -c 300 "$tmp/flush.out")"
[ "$(metric floe_landing_files_sealed_total)" = 0 ] ||
  fail "the restarted server sealed $(metric floe_landing_files_sealed_total) files again"
wait_for 30 '[ "$(metric floe_pending_landing_files)" = "$N" ]' ||
  fail "floe_pending_landing_files $(metric floe_pending_landing_files) after the restart"
[ "$(find "$tmp/wh/_landing" -type f -name '*.ndjson*' | wc -l)" = "$N" ] ||
  fail "$(find "$tmp/wh/_landing" -type f | wc -l) landing files on disk (want $N)"
stop_server
echo "serve_seal_many: OK"
