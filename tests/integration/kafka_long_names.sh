#!/usr/bin/env bash
# Kafka source: group ids and topics as long as allowed (200 bytes, 249 characters) still
# have their quarantine files. Their file names held the topic (pending:
# <topic>+<p>+<first>+<start>+<batch>.ndjson) or the group and the topic (published:
# kafka-<group>-<topic>-..., unrouted: <group>+<topic>+...), and passed the 255 bytes a
# file name can have: a batch with a malformed record of a 249-character topic failed its
# commit forever (nothing committed, the partition stuck), and with a group of 120 bytes
# and a topic of 100 the commit succeeded but its rejects were never published (lost from
# the quarantine, their offsets committed). A part too long is now cut (between UTF-8
# characters) and followed by '~' and a hash of the whole.
# One floe serve: source x, group of 100 'é' (200 bytes), topics A...A1 and A...A2 (249
# characters, the same but for the last; one batch holds both, at the same partition and
# offsets) into shop.q, every 10th message malformed; source y, group of 200 'g', topic of
# 249 'B', routed by event_type, every 10th record without it. Every valid event is in its
# table once, every malformed and unrouted record in the quarantine once.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
t1=$(printf 'A%.0s' $(seq 248))1
t2=$(printf 'A%.0s' $(seq 248))2
t3=$(printf 'B%.0s' $(seq 249))
gx=$(printf '\xc3\xa9%.0s' $(seq 100))
gy=$(printf 'g%.0s' $(seq 200))
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
for i in 1 2 3; do
  "$FLOE" gen --count 200 --seed $((i + 80)) -o "$tmp/gen-$i.ndjson" >/dev/null
  python3 - "$tmp/gen-$i.ndjson" "$tmp/ev-$i.ndjson" "$tmp/bad-$i" "$i" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
bad = []
for i in range(0, len(lines), 10):
    if sys.argv[4] == "3":
        e = json.loads(lines[i])
        del e["event_type"]
        lines[i] = json.dumps(e, separators=(",", ":"))
    else:
        lines[i] = '{"event_id": "not a number", "broken":'
    bad.append(i + 1)
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
open(sys.argv[3], "w").write("".join(f"{i}\n" for i in bad))
PY
done
mock_start 1
mock topic "$t1" 1
mock topic "$t2" 1
mock topic "$t3" 1
mock produce "$t1" "$tmp/ev-1.ndjson"
mock produce "$t2" "$tmp/ev-2.ndjson"
mock produce "$t3" "$tmp/ev-3.ndjson"
{
  server_section a
  cat <<CONF
$(table_section shop.q)
$(source_section x "$t1, $t2" "$gx" shop.q commit_interval=500ms kafka.session.timeout.ms=6000 \
    kafka.heartbeat.interval.ms=500)
$(source_section y "$t3" "$gy" "shop.ev_{field:event_type}" commit_interval=500ms \
    kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500)
CONF
  for t in page_view click search add_to_cart purchase login view_item scroll; do
    printf '[table shop.ev_%s]\nschema = %s\n' "$t" "$tmp/schema.json"
  done
} > "$tmp/a.conf"
node_start a "$tmp/a.conf"
for _ in $(seq 300); do
  m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics"
  c=$(echo "$m" | sed -n 's/^floe_kafka_committed_total{source="[xy]"} //p' |
    awk '{s += $1} END {print s + 0}')
  q=$(echo "$m" | sed -n 's/^floe_kafka_quarantined_total{source="[xy]"} //p' |
    awk '{s += $1} END {print s + 0}')
  [ "$c" = 540 ] && [ "$q" = 60 ] && break
  sleep 0.2
done
[ "$c" = 540 ] && [ "$q" = 60 ] || fail "committed $c rows and quarantined $q records, expected 540 and 60"
node_stop a
if grep -a "commit failed\|publishing the quarantine" "$tmp/node-a.log" >"$tmp/failed"; then
  fail "$(head -c 600 "$tmp/failed")"
fi
python3 - "$tmp" "$FLOE" "$t1" "$t2" "$t3" <<'PY' || fail "the tables and the quarantine"
import collections, glob, json, os, subprocess, sys
d, floe, t1, t2, t3 = sys.argv[1:6]
problems = []
got = collections.Counter()
files = glob.glob(f"{d}/wh/_quarantine/shop.q/kafka-*.ndjson") + \
    glob.glob(f"{d}/wh/_quarantine/kafka-unrouted/y/*.ndjson")
for f in files:
    for l in open(f, "rb"):
        q = json.loads(l)
        got[(q["source"], q["offset"])] += 1
left = glob.glob(f"{d}/wh/_quarantine/shop.q/.kafka-*/*")
if left:
    problems.append(f"pending quarantine files left: {[os.path.basename(f)[:40] for f in left]}")
want = collections.Counter({(f"kafka:{t}/0", o): 1 for t in (t1, t2, t3)
                            for o in range(0, 200, 10)})
if got != want:
    short = lambda k: (k[0][:8] + "..." + k[0][-4:], k[1])
    problems.append(f"quarantine: {sum(got.values())} records, expected 60: missing "
                    f"{[short(k) for k in sorted(set(want) - set(got))][:4]}, wrong count "
                    f"{[short(k) for k in got if got[k] != want.get(k, 0)][:4]}")
env = dict(os.environ, FLOE_CATALOG_URI=f"{d}/wh/catalog.db", FLOE_WAREHOUSE=f"{d}/wh")
ids = collections.Counter()
tables = ["q"] + [f"ev_{t}" for t in ("page_view", "click", "search", "add_to_cart",
                                       "purchase", "login", "view_item", "scroll")]
for t in tables:
    r = subprocess.run([floe, "scan", f"shop.{t}", "--columns", "event_id"], env=env,
                       capture_output=True)
    if r.returncode == 0:
        ids.update(json.loads(l)["event_id"] for l in r.stdout.split(b"\n") if l)
for i in (1, 2, 3):
    for n, l in enumerate(open(f"{d}/ev-{i}.ndjson").read().split("\n")[:-1]):
        if n % 10 and ids[json.loads(l)["event_id"]] != 1:
            problems.append(f"topic {i} line {n + 1}: in the tables "
                            f"{ids[json.loads(l)['event_id']]} times")
            break
if problems:
    sys.exit("\n".join(problems))
PY
echo "kafka_long_names: ok"
