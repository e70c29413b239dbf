#!/usr/bin/env bash
# Kafka source: staged segments do not grow the process without bound. A small budget
# (max_buffered_bytes = 512KB: a batch is staged at 256 KB) and a long commit_interval
# (300 s) stage hundreds of segments in one interval. Each staged segment used to keep its
# conversion's 64 KiB arena and its job's schema, spec and metrics settings until the
# interval's commit: at 2 MB and a 40 s interval, 726 segments held 60 MB (VmHWM 134 MB,
# against about 75 MB for 5 s intervals). Now a staged segment keeps only its files'
# records (packed), and the interval commits early once they hold half of the budget.
# Checked: the resident set grows by less than 12 MB between the 20th and the 220th staged
# segment (Release, prefetch 1 MB: 17 MB before, 7 MB now), and every event is committed
# exactly once.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
# ASan keeps freed memory aside (its quarantine): the resident set would grow with every
# conversion, whatever the segments hold
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=0"
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 240000 --seed 41 -o "$tmp/w.ndjson" >/dev/null
# in 6 parts: the mock cluster keeps about 48,000 of these messages
split -l 40000 -d "$tmp/w.ndjson" "$tmp/part"
mock_start 1
mock topic events 2
cat >"$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events partition=event_type)
$(source_section ev events sm shop.events commit_interval=300s max_buffered_bytes=512KB \
    kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500 \
    kafka.queued.max.messages.kbytes=1024)
CONF
metric() {
  curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics" >"$tmp/metrics" || fail "metrics"
  sed -n "s/^$1{source=\"ev\"} //p" "$tmp/metrics"
}
# rss_at N: the resident set (kB) once N segments are staged
rss_at() {
  for _ in $(seq 1800); do
    [ "$(metric floe_kafka_staged_segments_total)" -ge "$1" ] && break
    sleep 0.1
  done
  [ "$(metric floe_kafka_staged_segments_total)" -ge "$1" ] ||
    fail "$(metric floe_kafka_staged_segments_total) segments staged, expected $1"
  awk '/VmRSS/ {print $2}' "/proc/${node_pid[a]}/status"
}
node_start a "$tmp/a.conf"
# each part once the one before is consumed
(
  n=0
  for f in "$tmp"/part0?; do
    mock produce events "$f" lz4
    n=$((n + 40000))
    for _ in $(seq 1200); do
      v=$(metric floe_kafka_consumed_total 2>/dev/null || true)
      [ "${v:-0}" -ge "$n" ] && break
      sleep 0.1
    done
  done
) &
producer=$!
r1=$(rss_at 20)
r2=$(rss_at 220)
wait "$producer" || fail "producing"
echo "resident set: $r1 kB at 20 staged segments, $r2 kB at 220 ($SECONDS s)"
[ $((r2 - r1)) -lt 12288 ] ||
  fail "the resident set grew by $((r2 - r1)) kB from 20 to 220 staged segments"
# the rest, committed by flushes (the interval is 300 s)
for _ in $(seq 60); do
  curl -sf -XPOST "http://127.0.0.1:$(cat "$tmp/port-a")/v1/admin/flush" >/dev/null || fail "flush"
  [ "$(scan_count shop.events)" -ge 240000 ] && break
  sleep 2
done
wait_rows shop.events 240000 5
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" sm "$tmp/w.ndjson" /dev/null ||
  fail "not every event exactly once"
echo "PASS"
