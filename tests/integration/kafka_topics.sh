#!/usr/bin/env bash
# Kafka source: topics by regex and compressed producer batches. One consumer subscribes
# to ^ev-.* with table = raw.{topic}; ev-gzip exists at its start, ev-zstd, ev-lz4,
# ev-snappy and other are created after it (metadata refreshed every 500 ms). Each ev-*
# topic gets 1,500 events in batches of its codec (the producer's compression.codec): each
# table ends with exactly its topic's events, once; the topic other, which does not match,
# is never assigned and its table stays empty. (The 6 s session timeout: the mock cluster
# answers a rejoin - each new topic - after the group's session timeout less 1 s, and
# librdkafka's default of 45 s left the consumer idle for most of the test.)
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
codecs="gzip zstd lz4 snappy"
seed=20
for c in $codecs other; do
  seed=$((seed + 1))
  "$FLOE" gen --count 1500 --seed $seed -o "$tmp/$c.ndjson" >/dev/null
done
: > "$tmp/none"
mock_start 3
mock topic ev-gzip 3
{
  cat <<CONF
$(server_section a)
$(source_section raw "^ev-.*" topics "raw.{topic}" commit_interval=1s \
    kafka.topic.metadata.refresh.interval.ms=500 kafka.session.timeout.ms=6000 \
    kafka.heartbeat.interval.ms=500)
CONF
  for t in ev-gzip ev-zstd ev-lz4 ev-snappy other; do
    printf '[table raw.%s]\nschema = %s\n' "$t" "$tmp/schema.json"
  done
} > "$tmp/a.conf"
node_start a "$tmp/a.conf"
for _ in $(seq 300); do grep -q "assigned ev-gzip/" "$tmp/node-a.log" && break; sleep 0.1; done
grep -q "assigned ev-gzip/" "$tmp/node-a.log" || fail "ev-gzip was not assigned"
for c in zstd lz4 snappy; do mock topic "ev-$c" 3; done
mock topic other 3
for c in $codecs; do mock produce "ev-$c" "$tmp/$c.ndjson" "$c"; done
mock produce other "$tmp/other.ndjson" none
for c in $codecs; do wait_rows "raw.ev-$c" 1500 120; done
sleep 2 # anything taken twice, or from other, would show up now
node_stop a
for c in $codecs; do
  python3 "$KAFKA_DIR/verify.py" "$tmp/wh" "raw.ev-$c" "$FLOE" topics "$tmp/$c.ndjson" \
    "$tmp/none" || fail "raw.ev-$c"
done
[ "$(scan_count raw.other)" = 0 ] || fail "raw.other holds rows of a topic not matching"
! grep -q "assigned other/" "$tmp/node-a.log" || fail "the topic other was assigned"
echo "kafka_topics: ok"
