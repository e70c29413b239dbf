#!/usr/bin/env bash
# Kafka source: a table's partition spec changed while an interval is staged. Staged
# segments were converted under the spec of their time (bucket(4, user_id)); the
# interval's commit must put their files in a manifest of that spec, not of the table's
# default at the commit (bucket(16, user_id)), where bucket numbers of 4 would read as
# numbers of 16 and a query on user_id would prune files it matches. 1: every batch
# converts ahead, from its first 4 KB, and the commit is held 6 s between the conversion
# of the interval's last batch and its append (FLOE_TEST_KAFKA_COMMIT_PAUSE_MS, tests
# only); the spec changes 3 s into it. 2: an interval whose segments were written under
# two specs (bucket(16, user_id), then day(ts)) is consumed again under the new one;
# dropped when the last batch converts at the commit, which it does unless it grew to
# 1 MiB before the change and converted ahead. Checked: every event once, and for hour
# and day windows and single users, the rows a pruned scan returns equal the rows an
# unpruned one returns (before the fix: "user_id = 376543: 0 rows pruned, 1 unpruned").
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
CAT=(env FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh")
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 12000 --seed 51 -o "$tmp/ev1.ndjson" >/dev/null
"$FLOE" gen --count 12000 --seed 52 -o "$tmp/ev2.ndjson" >/dev/null
cat "$tmp/ev1.ndjson" "$tmp/ev2.ndjson" >"$tmp/ev.ndjson"
: >"$tmp/none"
mock_start 1
mock topic events 3
cat >"$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section ev events sc shop.events commit_interval=300s max_buffered_bytes=4MB)
CONF
"${CAT[@]}" "$FLOE" namespace create shop >/dev/null
"${CAT[@]}" "$FLOE" table create shop.events --schema "$tmp/schema.json" \
  --partition "bucket(4, user_id)" >/dev/null
# 1. the whole interval written under bucket(4, user_id), committed under bucket(16, ...)
FLOE_TEST_KAFKA_AHEAD_BYTES=4096 FLOE_TEST_KAFKA_COMMIT_PAUSE_MS=6000 node_start a "$tmp/a.conf"
mock produce events "$tmp/ev1.ndjson"
until_metric floe_kafka_consumed_total 12000 60
until_metric floe_kafka_staged_segments_total 1 60
curl -s -o /dev/null -XPOST "http://127.0.0.1:$(cat "$tmp/port-a")/v1/admin/flush" &
flusher=$!
sleep 3
"${CAT[@]}" "$FLOE" table partition shop.events replace "bucket(16, user_id)" >/dev/null ||
  fail "replacing the partition spec"
wait "$flusher" || true
flush_until shop.events 12000
grep -q "partition specs" "$tmp/node-a.log" &&
  fail "the interval was dropped: its last batch did not convert ahead, the test did not test"
node_stop a
# 2. segments under bucket(16, user_id) and the last batch under day(ts): consumed again
mv "$tmp/node-a.log" "$tmp/node-a1.log"
node_start a "$tmp/a.conf"
mock produce events "$tmp/ev2.ndjson"
until_metric floe_kafka_consumed_total 12000 60
until_metric floe_kafka_staged_segments_total 1 60
"${CAT[@]}" "$FLOE" table partition shop.events replace "day(ts)" >/dev/null ||
  fail "replacing the partition spec again"
flush_until shop.events 24000
if grep -q "partition specs" "$tmp/node-a.log"; then
  echo "2: the interval written under two specs was consumed again"
else
  echo "2: the interval's last batch converted ahead, like its segments"
fi
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" sc "$tmp/ev.ndjson" "$tmp/none" ||
  fail "the table"
# pruned against unpruned scans over hour and day windows of the events' time range and
# over single users
python3 - "$tmp/ev.ndjson" >"$tmp/windows" <<'PY'
import datetime, json, random, sys
ts = sorted(json.loads(l)["ts"][:19] for l in open(sys.argv[1]))
lo = datetime.datetime.fromisoformat(ts[0]).replace(minute=0, second=0)
hi = datetime.datetime.fromisoformat(ts[-1])
hours = int((hi - lo).total_seconds() // 3600) + 1
rnd = random.Random(7)
for span in [1, 1, 1, 3, 24, 24]:
    a = lo + datetime.timedelta(hours=rnd.randrange(max(1, hours - span + 1)))
    b = a + datetime.timedelta(hours=span)
    print("ts >= '%s' AND ts < '%s'" % (a.strftime("%Y-%m-%dT%H:%M:%S"),
                                        b.strftime("%Y-%m-%dT%H:%M:%S")))
users = sorted({json.loads(l)["user_id"] for l in open(sys.argv[1])})
for u in rnd.sample(users, min(12, len(users))):
    print("user_id = %d" % u)
PY
while read -r w; do
  "${CAT[@]}" "$FLOE" scan shop.events --where "$w" --columns event_id >"$tmp/p" ||
    fail "scan --where $w"
  "${CAT[@]}" "$FLOE" scan shop.events --where "$w" --no-prune --columns event_id >"$tmp/u" ||
    fail "scan --no-prune --where $w"
  [ -s "$tmp/u" ] || fail "no event where $w: the window tests nothing"
  cmp -s <(sort "$tmp/p") <(sort "$tmp/u") ||
    fail "$w: $(wc -l <"$tmp/p") rows pruned, $(wc -l <"$tmp/u") unpruned"
done <"$tmp/windows"
echo "kafka_spec_change: ok"
