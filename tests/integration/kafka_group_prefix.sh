#!/usr/bin/env bash
# Kafka source: two consumer groups writing one table, one group id the other followed by
# '.' and more. Group a.b's topic c and group a's topic b.c make the same offset property,
# floe.kafka.a.b.c.0: without a refusal, group a would resume from (and be fenced on) group
# a.b's offset, losing or duplicating events. Each commit registers its group in the table
# (floe.kafka-group.<group>), and a group refuses a table registering such another one.
# One floe serve, two sources into shop.events, both assigned their partition while the
# table registers no group: first (group a.b, topic c, 600 events, 5% malformed) commits;
# then topic b.c gets 900 events and second (group a) takes them, and its commit is
# refused (the error names both groups and the table; /metrics counts it). The server is
# restarted: second's assignment is refused this time (it reads the offsets of a table
# that registers a.b), while first takes 400 more events of c. The table ends with exactly
# c's valid events, once, and c's malformed ones in the quarantine; it holds no offset or
# registration of group a. (Before the registry, second resumed from first's offset.)
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 600 --seed 41 --malformed-rate 0.05 --malformed-lines "$tmp/bad1" \
  -o "$tmp/c1.ndjson" >/dev/null
"$FLOE" gen --count 400 --seed 42 --malformed-rate 0.05 --malformed-lines "$tmp/bad2" \
  -o "$tmp/c2.ndjson" >/dev/null
"$FLOE" gen --count 900 --seed 43 -o "$tmp/bc.ndjson" >/dev/null
mock_start 1
mock topic c 1
mock topic b.c 1
{
  cat <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section first c a.b shop.events commit_interval=500ms kafka.session.timeout.ms=6000 \
    kafka.heartbeat.interval.ms=500)
$(source_section second b.c a shop.events commit_interval=500ms kafka.session.timeout.ms=6000 \
    kafka.heartbeat.interval.ms=500)
CONF
} > "$tmp/a.conf"
valid1=$(( 600 - $(wc -l <"$tmp/bad1") ))
valid2=$(( 400 - $(wc -l <"$tmp/bad2") ))
metric() { # metric NAME SOURCE: its value on node a (0 when absent)
  local m
  m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics of node a"
  echo "$m" | sed -n "s/^$1{source=\"$2\"} //p" | awk '{print $1 + 0; exit} END {if (!NR) print 0}'
}
refusal="consumer group 'a' refuses table shop.events, which consumer group 'a.b' writes too"

node_start a "$tmp/a.conf"
# both assigned before anything is committed (the table registers no group yet)
for _ in $(seq 300); do
  grep -q "kafka first: assigned c/0" "$tmp/node-a.log" &&
    grep -q "kafka second: assigned b.c/0" "$tmp/node-a.log" && break
  sleep 0.1
done
grep -q "kafka second: assigned b.c/0" "$tmp/node-a.log" || fail "b.c/0 was not assigned"
mock produce c "$tmp/c1.ndjson"
wait_rows shop.events "$valid1" 120
# the commit path: second takes b.c's events, its commit is refused
mock produce b.c "$tmp/bc.ndjson"
for _ in $(seq 300); do
  [ "$(metric floe_kafka_consumed_total second)" = 900 ] && break
  sleep 0.2
done
[ "$(metric floe_kafka_consumed_total second)" = 900 ] ||
  fail "second consumed $(metric floe_kafka_consumed_total second) of b.c's 900 messages"
for _ in $(seq 300); do
  grep -q "kafka second: shop.events: commit failed (kept, retried): $refusal" \
    "$tmp/node-a.log" && break
  sleep 0.2
done
grep -q "kafka second: shop.events: commit failed (kept, retried): $refusal" "$tmp/node-a.log" ||
  fail "second's commit was not refused"
[ "$(metric floe_kafka_group_refused_total second)" -ge 1 ] ||
  fail "floe_kafka_group_refused_total of second: $(metric floe_kafka_group_refused_total second)"
[ "$(metric floe_kafka_commits_total second)" = 0 ] ||
  fail "second committed $(metric floe_kafka_commits_total second) times"
[ "$(metric floe_kafka_group_refused_total first)" = 0 ] || fail "first was refused"
node_stop a

# the assignment path: the table registers a.b when second's partition is assigned
mv "$tmp/node-a.log" "$tmp/run1.log"
node_start a "$tmp/a.conf"
mock produce c "$tmp/c2.ndjson"
wait_rows shop.events $((valid1 + valid2)) 120
for _ in $(seq 300); do
  grep -q "kafka second: assignment: $refusal" "$tmp/node-a.log" && break
  sleep 0.2
done
grep -q "kafka second: assignment: $refusal" "$tmp/node-a.log" ||
  fail "second's assignment was not refused"
[ "$(metric floe_kafka_group_refused_total second)" -ge 1 ] || fail "refusal not counted"
[ "$(metric floe_kafka_consumed_total second)" = 0 ] ||
  fail "second consumed $(metric floe_kafka_consumed_total second) messages unassigned"
sleep 2 # anything of b.c, or of c twice, would show up now
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" a.b "$tmp/c1.ndjson" "$tmp/bad1" \
  "$tmp/c2.ndjson" "$tmp/bad2" || fail "shop.events does not hold exactly group a.b's events"
FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" table properties \
  shop.events --json >"$tmp/props.json"
python3 - "$tmp/props.json" <<'PY' || fail "the table's Kafka properties"
import json, sys
p = json.load(open(sys.argv[1]))
kafka = sorted(k for k in p if k.startswith("floe.kafka"))
want = ["floe.kafka-batch.a.b.c.0", "floe.kafka-group.a.b", "floe.kafka.a.b.c.0"]
if kafka != want:
    sys.exit(f"Kafka properties {kafka}, expected {want}")
if p["floe.kafka.a.b.c.0"] != "1000":
    sys.exit(f"floe.kafka.a.b.c.0 = {p['floe.kafka.a.b.c.0']}, expected 1000")
PY
echo "kafka_group_prefix: ok"
