#!/usr/bin/env bash
# Kafka source: staged files never grow old enough for floe orphans. A staged segment's
# data files are in no snapshot until its interval commits, and floe orphans deletes
# unreferenced files an hour old (its least age without --force), so:
# 1. an interval holding staged segments commits at the latest 15 min after its first
#    record, whatever commit_interval (here 300 s, the bound shortened to 2 s by
#    FLOE_TEST_KAFKA_STAGED_AGE_MS, tests only): a snapshot comes without a flush;
# 2. an interval whose commit still fails 45 min (here 6 s) after its first record is
#    dropped: its staged files are deleted and its events consumed again, and once the
#    table can be written every event is committed once (the metadata folder is made
#    immutable with chattr +i meanwhile, so the append fails).
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
need_chattr
trap 'chattr -i "$tmp/wh/shop/events/metadata" 2>/dev/null || true; cleanup' EXIT
export FLOE_LOG=info FLOE_TEST_KAFKA_STAGED_AGE_MS=2000
CAT=(env FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh")
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 20000 --seed 41 --malformed-rate 0.005 --malformed-lines "$tmp/bad" \
  -o "$tmp/ev.ndjson" >/dev/null
head -10000 "$tmp/ev.ndjson" >"$tmp/ev1.ndjson"
tail -n +10001 "$tmp/ev.ndjson" >"$tmp/ev2.ndjson"
mock_start 1
mock topic events 3
cat >"$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section ev events sa shop.events commit_interval=300s max_buffered_bytes=4MB)
CONF
"${CAT[@]}" "$FLOE" namespace create shop >/dev/null
"${CAT[@]}" "$FLOE" table create shop.events --schema "$tmp/schema.json" >/dev/null
snapshots() {
  "${CAT[@]}" "$FLOE" snapshots shop.events --json >"$tmp/snaps.json"
  python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$tmp/snaps.json"
}
data_files() { find "$tmp/wh" -path '*/data/*' -name '*.parquet' | sort; }
node_start a "$tmp/a.conf"

# 1. committed 2 s after the interval's first record although commit_interval is 300 s
mock produce events "$tmp/ev1.ndjson"
until_metric floe_kafka_staged_segments_total 1 60
[ "$(snapshots)" = 0 ] || fail "a snapshot before the staged interval was due"
for _ in $(seq 150); do
  [ "$(snapshots)" -ge 1 ] && break
  sleep 0.1
done
[ "$(snapshots)" -ge 1 ] ||
  fail "no snapshot 15 s after an interval was staged (commit_interval 300 s): its staged files age"
committed=$(data_files)

# 2. a commit failing 6 s after its interval began: the interval is dropped
chattr +i "$tmp/wh/shop/events/metadata"
s1=$(metric floe_kafka_staged_segments_total)
mock produce events "$tmp/ev2.ndjson"
until_metric floe_kafka_staged_segments_total $((s1 + 1)) 60
staged=$(comm -13 <(echo "$committed") <(data_files))
[ -n "$staged" ] || fail "a segment is staged and no new data file is on disk"
for _ in $(seq 300); do
  grep -q "staged segments are" "$tmp/node-a.log" && break
  sleep 0.1
done
grep -q "staged segments are" "$tmp/node-a.log" ||
  fail "the interval whose commit fails was not dropped 30 s after it began"
for f in $staged; do
  [ ! -e "$f" ] || fail "the dropped interval's staged file $f is still on disk"
done
chattr -i "$tmp/wh/shop/events/metadata"
flush_until shop.events "$((20000 - $(wc -w <"$tmp/bad")))"
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" sa "$tmp/ev.ndjson" "$tmp/bad" ||
  fail "the table or the quarantine"
echo "kafka_staged_age: ok"
