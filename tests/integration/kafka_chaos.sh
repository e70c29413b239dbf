#!/usr/bin/env bash
# Kafka source under chaos: 3 `floe serve` consumers of one group take two topics (12 and
# 6 partitions, on a mock cluster of 3 brokers) into one table while events are produced
# in 8 rounds (5% malformed, mixed batch compression). Meanwhile, for KAFKA_CHAOS_CYCLES
# (20) cycles: a consumer is killed with SIGKILL at a random moment and restarted, a
# fourth consumer joins and leaves (rebalances), the brokers fail requests (Fetch,
# OffsetCommit, Heartbeat errors) and move partition leaders, and `floe expire
# --older-than 0s` and `floe rewrite` run on the table. Afterwards the table holds every
# valid event exactly once and the quarantine every malformed one exactly once.
# Batches convert ahead from their first 4 KiB (FLOE_TEST_KAFKA_AHEAD_BYTES), so the
# kills, rebalances and fenced commits also meet conversions in progress.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
CYCLES=${KAFKA_CHAOS_CYCLES:-20}
export FLOE_LOG=info FLOE_TEST_KAFKA_AHEAD_BYTES=4096
start=$(date +%s)

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
mock_start 3
mock topic events 12
mock topic clicks 6
args=()
for r in 1 2 3 4 5 6 7 8; do
  "$FLOE" gen --count 3000 --seed $((100 + r)) --malformed-rate 0.05 \
    --malformed-lines "$tmp/bad$r" -o "$tmp/ev$r.ndjson" >/dev/null
  args+=("$tmp/ev$r.ndjson" "$tmp/bad$r")
done
codecs=(none lz4 zstd snappy gzip lz4 zstd none)

conf() {
  cat > "$tmp/$1.conf" <<CONF
$(server_section "$1")
$(table_section shop.events partition=event_type)
$(source_section ev "events, clicks" chaos shop.events commit_interval=400ms \
    commit_bytes=256KB kafka.session.timeout.ms=3000 kafka.heartbeat.interval.ms=300 \
    kafka.topic.metadata.refresh.interval.ms=1000)
CONF
}
for n in a b c d; do conf $n; done
node_start a "$tmp/a.conf"
node_start b "$tmp/b.conf"
node_start c "$tmp/c.conf"

# maintenance racing the consumers' commits
(
  export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
  while [ -d "$tmp" ] && [ ! -f "$tmp/stop-maint" ]; do
    "$FLOE" expire shop.events --older-than 0s >>"$tmp/maint.log" 2>&1 || true
    "$FLOE" rewrite shop.events --option min-input-files=2 --quiet >>"$tmp/maint.log" 2>&1 || true
    sleep 0.5
  done
) &
maint=$!
# a failure exits through lib.sh's cleanup: the loop must not outlive the test (it would
# hold ctest's output pipe open until the timeout)
trap 'kill "$maint" 2>/dev/null || true; cleanup' EXIT

round=0
errors=("1 4 6" "1 3 7" "8 3 7" "12 2 16" "8 2 27" "3 2 5")
for i in $(seq "$CYCLES"); do
  if [ $((i % 2)) = 1 ] && [ $round -lt 8 ]; then
    topic=events; [ $((round % 3)) = 2 ] && topic=clicks
    mock produce $topic "$tmp/ev$((round + 1)).ndjson" "${codecs[$round]}"
    round=$((round + 1))
  fi
  mock errors ${errors[$((RANDOM % ${#errors[@]}))]}
  mock leader events $((RANDOM % 12)) $((RANDOM % 3 + 1))
  sleep "0.$((RANDOM % 8 + 1))"
  victim=$(printf 'a\nb\nc\n' | shuf -n1)
  node_kill "$victim"
  if [ $((i % 4)) = 0 ]; then
    if [ -n "${node_pid[d]:-}" ]; then node_stop d; else node_start d "$tmp/d.conf"; fi
  fi
  sleep "0.$((RANDOM % 5))"
  node_start "$victim" "$tmp/$victim.conf"
done
while [ $round -lt 8 ]; do
  mock produce events "$tmp/ev$((round + 1)).ndjson" "${codecs[$round]}"
  round=$((round + 1))
done
touch "$tmp/stop-maint"
wait $maint
valid=0
for r in 1 2 3 4 5 6 7 8; do valid=$((valid + 3000 - $(wc -l <"$tmp/bad$r"))); done
wait_rows shop.events "$valid" 150
sleep 2 # anything taken twice would show up now
for n in "${!node_pid[@]}"; do node_stop "$n"; done
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" chaos "${args[@]}" || fail "verify"
fenced=$(cat "$tmp"/node-*.log | grep -c "another consumer committed" || true)
rewrites=$(grep -c "rewrote\|replaced\|files" "$tmp/maint.log" || true)
ahead=$(cat "$tmp"/node-*.log | grep -c "(converted ahead)" || true)
[ "$ahead" -ge 1 ] || fail "no commit was converted ahead"
echo "kafka_chaos: $CYCLES kills in $(( $(date +%s) - start )) s; $fenced fenced commits;" \
  "$ahead commits converted ahead"
echo "kafka_chaos: ok"
