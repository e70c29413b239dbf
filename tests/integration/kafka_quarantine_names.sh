#!/usr/bin/env bash
# Kafka source: the published quarantine names of two groups writing one table never meet.
# A batch's rejects of a partition were published as kafka-<group>-<topic>-<p>-<first>.ndjson:
# group a-b's topic c and group a's topic b-c both made kafka-a-b-c-0-<first>.ndjson, and
# the second batch to publish replaced the first one's file. The name now ends with the
# batch's id (kafka-<group>-<topic>-<p>-<first>-<batch>.ndjson, a random UUID per commit).
# One floe serve, two sources into shop.q: x (group a-b, topic c) and y (group a, topic
# b-c), 300 events each, the first message of each malformed (so both first batches start
# at offset 0 with rejects) and every 10th. Every malformed message of both topics is in
# the quarantine once, with its topic and offset, every valid one in the table once.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
for t in c b-c; do
  "$FLOE" gen --count 300 --seed $((${#t} + 50)) -o "$tmp/gen-$t.ndjson" >/dev/null
  python3 - "$tmp/gen-$t.ndjson" "$tmp/ev-$t.ndjson" "$tmp/bad-$t" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
bad = [i for i in range(1, len(lines) + 1) if i % 10 == 1]
for i in bad:
    lines[i - 1] = b'{"event_id": "not a number", "broken":'
open(sys.argv[2], "wb").write(b"\n".join(lines) + b"\n")
open(sys.argv[3], "w").write("".join(f"{i}\n" for i in bad))
PY
done
mock_start 1
mock topic c 1
mock topic b-c 1
mock produce c "$tmp/ev-c.ndjson"
mock produce b-c "$tmp/ev-b-c.ndjson"
{
  cat <<CONF
$(server_section a)
$(table_section shop.q)
CONF
  for s in "x a-b c" "y a b-c"; do
    read -r name group topic <<<"$s"
    cat <<CONF
$(source_section "$name" "$topic" "$group" shop.q commit_interval=500ms \
    kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500)
CONF
  done
} > "$tmp/a.conf"
node_start a "$tmp/a.conf"
wait_rows shop.q 540 120
for _ in $(seq 150); do
  m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics"
  q=$(echo "$m" | sed -n 's/^floe_kafka_quarantined_total{source="[xy]"} //p' |
    awk '{s += $1} END {print s + 0}')
  [ "$q" = 60 ] && break
  sleep 0.2
done
[ "$q" = 60 ] || fail "quarantined $q records, expected 60"
node_stop a
python3 - "$tmp" "$FLOE" <<'PY' || fail "the quarantine of shop.q"
import collections, glob, json, os, re, subprocess, sys
d, floe = sys.argv[1], sys.argv[2]
problems = []
got = collections.Counter()
names = sorted(os.path.basename(f) for f in glob.glob(f"{d}/wh/_quarantine/shop.q/*.ndjson"))
uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
for n in names:
    if not re.fullmatch(rf"kafka-a-b-c-0-[0-9]+-{uuid}\.ndjson", n):
        problems.append(f"quarantine file {n}: not kafka-<group>-<topic>-0-<first>-<batch>.ndjson")
    for l in open(f"{d}/wh/_quarantine/shop.q/{n}", "rb"):
        q = json.loads(l)
        got[(q["source"], q["offset"])] += 1
want = collections.Counter()
for t in ("c", "b-c"):
    for i in open(f"{d}/bad-{t}").read().split():
        want[(f"kafka:{t}/0", int(i) - 1)] = 1
if got != want:
    missing = sorted(set(want) - set(got))
    extra = sorted(k for k in got if got[k] != want.get(k, 0))
    problems.append(f"quarantine: {sum(got.values())} records, expected {sum(want.values())}; "
                    f"missing {missing[:5]}, wrong count {extra[:5]}; files {names}")
env = dict(os.environ, FLOE_CATALOG_URI=f"{d}/wh/catalog.db", FLOE_WAREHOUSE=f"{d}/wh")
ids = collections.Counter(json.loads(l)["event_id"] for l in subprocess.run(
    [floe, "scan", "shop.q", "--columns", "event_id"], env=env, check=True,
    capture_output=True).stdout.split(b"\n") if l)
for t in ("c", "b-c"):
    lines = open(f"{d}/ev-{t}.ndjson", "rb").read().split(b"\n")[:-1]
    for i, l in enumerate(lines, 1):
        if i % 10 != 1 and ids[json.loads(l)["event_id"]] != 1:
            problems.append(f"{t} line {i}: in the table {ids[json.loads(l)['event_id']]} times")
            break
if problems:
    sys.exit("\n".join(problems))
PY
echo "kafka_quarantine_names: ok"
