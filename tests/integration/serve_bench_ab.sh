#!/usr/bin/env bash
# bench/ingest_ab and its client (bench/ingest_client.c) against this floe, briefly.
#
# 1. ingest_client's COUNT: 2 connections x 3 requests of 500 events stop at 6 requests
#    (the server accepted 3,000 events), though SECONDS would allow 30 s.
# 2. bench/ingest_ab FLOE FLOE, one round of 3 s, 2 clients each: a round line with both
#    sides' events and a CPU figure in every one of total and HTTP, and ratios.
# (INSTR, the instruction count: serve_bench_ab_instr.sh)
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
export BENCH_OUT=$tmp/bench
source "$src/bench/lib/common.sh"
cc -O2 -o "$tmp/ingest_client" "$src/bench/ingest_client.c" -lcurl -lpthread 2> "$tmp/cc.log" || {
  echo "serve_bench_ab: SKIPPED (3 tests): cannot build bench/ingest_client.c: $(head -3 "$tmp/cc.log")"
  exit 77
}

# ---- 1. COUNT ------------------------------------------------------------------------
ingest_setup "$tmp" "$FLOE" 256MiB # bench/ingest's server: batch, schema, serve.conf
start_server --config "$tmp/serve.conf"
t0=$(date +%s)
out=$("$tmp/ingest_client" "http://127.0.0.1:$port/v1/tables/bench.events/events" \
  "$tmp/batch.ndjson" 500 2 30 0 3)
took=$(( $(date +%s) - t0 ))
acc=$(curl -s "http://127.0.0.1:$port/metrics" |
  awk '$1 == "floe_events_accepted_total{table=\"bench.events\"}" {print $2}')
stop_server
case $out in *'"requests":6,"errors":0,'*) ;; *) fail "COUNT 3 x 2 connections: $out" ;; esac
[ "$acc" = 3000 ] || fail "COUNT: the server accepted ${acc:-no} events, want 3000"
[ "$took" -lt 25 ] || fail "COUNT: the client ran ${took} s (until SECONDS, not COUNT)"
echo "ok 1 - ingest_client COUNT: 6 requests, 3000 events, ${took} s"

# ---- 2. side by side -------------------------------------------------------------------
CLIENTS=2 bash "$src/bench/ingest_ab" "$FLOE" "$FLOE" 3 1 > "$tmp/ab.log" 2>&1 ||
  fail "bench/ingest_ab: status $? $(tail -5 "$tmp/ab.log")"
n='[0-9]+\.[0-9]{2}'
r="[0-9]+\.[0-9]{3}"
grep -Eq "^round 1 \(load [0-9.]+\): A $n \($n, $n, $n, $n\), [1-9][0-9]* events; B $n \($n, $n, $n, $n\), [1-9][0-9]* events; B / A $r, HTTP $r\$" \
  "$tmp/ab.log" || fail "bench/ingest_ab: no round line: $(cat "$tmp/ab.log")"
# every total and every HTTP figure above zero (an HTTP share read after the clients left
# would be 0.00)
awk '/^round/ {
  for (i = 1; i < NF - 1; i++) if (($i == "A" || $i == "B") && $(i + 2) ~ /^\(/) {
    h = $(i + 2); gsub(/[(,]/, "", h); if ($(i + 1) + 0 <= 0 || h + 0 <= 0) bad = 1; seen++ }
} END { exit bad || seen != 2 }' "$tmp/ab.log" || fail "bench/ingest_ab: a zero figure: $(cat "$tmp/ab.log")"
echo "ok 2 - bench/ingest_ab: $(grep '^round' "$tmp/ab.log")"
