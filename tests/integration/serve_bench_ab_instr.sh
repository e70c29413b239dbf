#!/usr/bin/env bash
# bench/ingest_ab's INSTR mode against this floe: INSTR=1 counts srv_ingest's instructions
# with valgrind over exactly 2 x 1 x 500 events on each side. Skipped (77) without valgrind
# and for a floe built with ASan (the sanitized test build: run it with a Release floe,
# FLOE_BIN=build/floe).
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
export BENCH_OUT=$tmp/bench
source "$src/bench/lib/common.sh"
# (not under the sanitizers: ASan's floe does not run under valgrind)
if ! command -v valgrind > /dev/null || grep -qa __asan_init "$FLOE"; then
  echo "serve_bench_ab_instr: SKIPPED: INSTR needs valgrind and a floe built without ASan"
  exit 77
fi
CLIENTS=2 INSTR=1 bash "$src/bench/ingest_ab" "$FLOE" "$FLOE" > "$tmp/instr.log" 2>&1 ||
  fail "bench/ingest_ab INSTR: status $? $(tail -5 "$tmp/instr.log")"
[ "$(grep -c "instructions, 1000 events)" "$tmp/instr.log")" = 2 ] ||
  fail "bench/ingest_ab INSTR: want 1000 events a side: $(cat "$tmp/instr.log")"
grep -q "B / A: " "$tmp/instr.log" || fail "bench/ingest_ab INSTR: no ratio: $(cat "$tmp/instr.log")"
echo "ok 1 - bench/ingest_ab INSTR: $(grep -c 'instructions,' "$tmp/instr.log") sides counted"
