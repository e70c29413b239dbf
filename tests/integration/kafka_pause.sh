#!/usr/bin/env bash
# Kafka source: fetching paused per partition when one routed table fails to commit while
# another keeps committing (table = shop.{topic}, topics ta and tb of 3 partitions each,
# max_buffered_bytes = 1MB).
# 1. 500 events in each topic: both tables commit them.
# 2. shop.ta's data folder is replaced by a file: its commits fail and are kept. 6,000
#    more events in ta (3 MB): ta's 3 partitions pause once its batch holds half of the
#    budget, and only they (floe_kafka_paused_partitions = 3, "fetching paused on 3
#    partitions"), it makes no snapshot.
# 3. 4,000 more events in tb while ta is paused: tb's partitions keep flowing and commit
#    them (4,500 rows), ta's stay paused.
# 4. The folder comes back: ta's kept batch commits, its partitions resume and the rest
#    is taken. Each table ends with exactly its topic's events, once each.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 500 --seed 41 -o "$tmp/a1.ndjson" >/dev/null
"$FLOE" gen --count 6000 --seed 42 -o "$tmp/a2.ndjson" >/dev/null
"$FLOE" gen --count 500 --seed 43 -o "$tmp/b1.ndjson" >/dev/null
"$FLOE" gen --count 4000 --seed 44 -o "$tmp/b2.ndjson" >/dev/null
: > "$tmp/none"
mock_start 3
mock topic ta 3
mock topic tb 3
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.ta)
$(table_section shop.tb)
$(source_section events "ta, tb" pause "shop.{topic}" commit_interval=1s max_buffered_bytes=1MB)
CONF
snapshots() {
  FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" snapshots "$1" --json |
    python3 -c "import json,sys; print(len(json.load(sys.stdin)))"
}
metric() {
  curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics" |
    sed -n "s/^$1{source=\"events\"} //p" || fail "metrics"
}

# 1.
mock produce ta "$tmp/a1.ndjson" lz4
mock produce tb "$tmp/b1.ndjson" lz4
node_start a "$tmp/a.conf"
wait_rows shop.ta 500 60
wait_rows shop.tb 500 60

# 2.
ta_snaps=$(snapshots shop.ta)
data=$tmp/wh/shop/ta/data
[ -d "$data" ] || fail "no folder $data"
mv "$data" "$data.away"
echo "not a folder" > "$data"
mock produce ta "$tmp/a2.ndjson" lz4
# The pause (half the budget buffered), its log line and the first failed commit (the next
# commit interval) come in no fixed order: wait for all three.
for _ in $(seq 1200); do
  [ "$(metric floe_kafka_paused_partitions)" = 3 ] &&
    [ "$(metric floe_kafka_commit_failures_total)" -gt 0 ] &&
    grep -q "fetching paused on 3 partitions" "$tmp/node-a.log" && break
  sleep 0.1
done
[ "$(metric floe_kafka_paused_partitions)" = 3 ] ||
  fail "paused partitions: $(metric floe_kafka_paused_partitions), expected ta's 3"
grep -q "fetching paused on 3 partitions" "$tmp/node-a.log" || fail "no pause of 3 partitions in the log"
[ "$(metric floe_kafka_commit_failures_total)" -gt 0 ] || fail "no commit failed"
[ "$(snapshots shop.ta)" = "$ta_snaps" ] || fail "shop.ta made a snapshot while failing"

# 3.
mock produce tb "$tmp/b2.ndjson" lz4
wait_rows shop.tb 4500 240
[ "$(metric floe_kafka_paused_partitions)" = 3 ] ||
  fail "with ta failing, paused partitions: $(metric floe_kafka_paused_partitions), expected 3"
[ "$(snapshots shop.ta)" = "$ta_snaps" ] || fail "shop.ta made a snapshot while failing"
peak=$(metric floe_kafka_buffered_peak_bytes)
max_msg=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 1 }' "$tmp/a2.ndjson")
[ "$peak" -le $((1000000 + max_msg)) ] || fail "buffered $peak bytes at most, the budget is 1MB"

# 4. The kept batch's retry may make the folder again between the rm and the mv: then the
# folder is not empty, `mv -T` refuses, and the old files join the retry's one by one.
rm "$data"
if ! mv -T "$data.away" "$data" 2>/dev/null; then
  mv "$data.away"/* "$data"/
  rmdir "$data.away"
fi
wait_rows shop.ta 6500 240
for _ in $(seq 300); do [ "$(metric floe_kafka_paused_partitions)" = 0 ] && break; sleep 0.1; done
[ "$(metric floe_kafka_paused_partitions)" = 0 ] || fail "partitions still paused"
grep -q "fetching resumed on 3 partitions" "$tmp/node-a.log" || fail "no resume of 3 partitions in the log"
sleep 1
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.ta "$FLOE" pause \
  "$tmp/a1.ndjson" "$tmp/none" "$tmp/a2.ndjson" "$tmp/none" || fail "shop.ta"
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.tb "$FLOE" pause \
  "$tmp/b1.ndjson" "$tmp/none" "$tmp/b2.ndjson" "$tmp/none" || fail "shop.tb"
echo "kafka_pause: ok (peak $peak bytes buffered, budget 1000000)"
