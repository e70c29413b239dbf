#!/usr/bin/env bash
# Kafka source: messages holding NUL bytes. One floe serve, two sources over one topic of 3
# partitions: group plain into shop.events, group route into shop.ev_{field:event_type}.
# Among 600 generated events: messages with a raw NUL inside a string, a NUL after the
# object, only NUL bytes, and an object whose event_id is "\u0000" (each malformed: its
# quarantine line holds the record with \u0000 in it), and valid events whose payload
# holds an escaped NUL ("a\u0000b", as JSON allows).
# shop.events ends with every valid event once (content included) and its quarantine with
# every malformed message once; each partition's offset in the table is the number of its
# messages, each either a row or a quarantined record. The routed tables hold every valid
# event (the escaped-NUL ones too) in the table of its type, once; the malformed messages
# are in kafka-unrouted/, once each.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/gen.json" >/dev/null
"$FLOE" gen --count 600 --seed 31 -o "$tmp/gen.ndjson" >/dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(f"{d}/gen.json"))
nid = 1000
for name, t in [("_topic", "string"), ("_partition", "int"), ("_offset", "long")]:
    s["fields"].append({"id": nid, "name": name, "required": False, "type": t}); nid += 1
json.dump(s, open(f"{d}/schema.json", "w"))
out, bad = [], []
for i, l in enumerate(open(f"{d}/gen.ndjson", "rb").read().split(b"\n")[:-1], 1):
    e = json.loads(l)
    if i % 50 == 7:
        out.append(l.replace(b'"payload":"', b'"payload":"x\x00y', 1)); bad.append(len(out))
    elif i % 50 == 19:
        out.append(l + b"\x00"); bad.append(len(out))
    elif i % 50 == 29:
        e["event_id"] = "\u0000"
        out.append(json.dumps(e, separators=(",", ":")).encode()); bad.append(len(out))
    elif i % 50 == 41:
        e["payload"] = "a\u0000b"
        out.append(json.dumps(e, separators=(",", ":")).encode())
    else:
        out.append(l)
    if i % 100 == 3:
        out.append(b"\x00" * 64); bad.append(len(out))
open(f"{d}/ev.ndjson", "wb").write(b"\n".join(out) + b"\n")
open(f"{d}/bad", "w").write("\n".join(map(str, bad)) + "\n")
PY
mock_start 3
mock topic events 3
mock produce events "$tmp/ev.ndjson"
types="page_view click search add_to_cart purchase login view_item scroll"
{
  cat <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section plain events plain shop.events commit_interval=500ms column.topic=_topic \
    column.partition=_partition column.offset=_offset kafka.session.timeout.ms=6000)
$(source_section route events route "shop.ev_{field:event_type}" commit_interval=500ms \
    kafka.session.timeout.ms=6000)
CONF
  for t in $types; do printf '[table shop.ev_%s]\nschema = %s\n' "$t" "$tmp/gen.json"; done
} > "$tmp/a.conf"
nmsg=$(wc -l <"$tmp/ev.ndjson")
nbad=$(wc -l <"$tmp/bad")
node_start a "$tmp/a.conf"
# every message counted by both sources (quarantined or committed)
for _ in $(seq 300); do
  m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics"
  c=$(echo "$m" | sed -n 's/^floe_kafka_consumed_total{source="\(plain\|route\)"} //p' | awk '{s += $1} END {print s + 0}')
  [ "$c" = $((2 * nmsg)) ] && break
  sleep 0.2
done
[ "$c" = $((2 * nmsg)) ] || fail "consumed $c messages, expected $((2 * nmsg))"
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" plain "$tmp/ev.ndjson" "$tmp/bad" ||
  fail "shop.events"
python3 - "$tmp" "$FLOE" "$nmsg" "$types" <<'PY' || fail "offsets or routed tables"
import collections, glob, json, os, subprocess, sys
d, floe, nmsg, types = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
env = dict(os.environ, FLOE_CATALOG_URI=f"{d}/wh/catalog.db", FLOE_WAREHOUSE=f"{d}/wh")
def run(*a):
    return subprocess.run([floe, *a], env=env, check=True, capture_output=True).stdout
problems = []
# shop.events: per partition, rows and quarantined records make exactly [0, offset)
props = json.loads(run("table", "properties", "shop.events", "--json"))
seen = collections.defaultdict(collections.Counter)
for l in run("scan", "shop.events", "--columns", "_partition,_offset").split(b"\n"):
    if l:
        r = json.loads(l); seen[r["_partition"]][r["_offset"]] += 1
for f in glob.glob(f"{d}/wh/_quarantine/shop.events/kafka-plain-*.ndjson"):
    for l in open(f, "rb"):
        q = json.loads(l); seen[int(q["source"].rsplit("/", 1)[1])][q["offset"]] += 1
total = 0
for p in range(3):
    off = int(props.get(f"floe.kafka.plain.events.{p}", 0)); total += off
    if set(seen[p]) != set(range(off)) or max(seen[p].values(), default=1) != 1:
        problems.append(f"partition {p}: offset {off}, {len(seen[p])} offsets seen, "
                        f"missing {sorted(set(range(off)) - set(seen[p]))[:5]}")
if total != nmsg:
    problems.append(f"offsets sum to {total}, {nmsg} messages")
# routed: every valid event in its type's table once, the malformed ones unrouted once
lines = open(f"{d}/ev.ndjson", "rb").read().split(b"\n")[:-1]
bad = {int(x) for x in open(f"{d}/bad").read().split()}
want = collections.defaultdict(set)
for i, l in enumerate(lines, 1):
    if i not in bad:
        e = json.loads(l); want[e["event_type"]].add(e["event_id"])
for t in types:
    ids = collections.Counter(json.loads(l)["event_id"] for l in
                              run("scan", f"shop.ev_{t}", "--columns", "event_id").split(b"\n") if l)
    if set(ids) != want[t] or max(ids.values(), default=1) != 1:
        problems.append(f"shop.ev_{t}: {sum(ids.values())} rows, want {len(want[t])}, "
                        f"missing {len(want[t] - set(ids))}")
# (the event_id "\u0000" ones reach their table and are rejected by its conversion)
q = [json.loads(l) for f in glob.glob(f"{d}/wh/_quarantine/kafka-unrouted/route/*.ndjson") +
     glob.glob(f"{d}/wh/_quarantine/shop.ev_*/kafka-route-*.ndjson") for l in open(f, "rb")]
if len(q) != len(bad) or len({(x["source"], x["offset"]) for x in q}) != len(q):
    problems.append(f"{len(q)} records quarantined by group route, want the {len(bad)} malformed")
print(f"kafka_nul: {nmsg} messages, {len(bad)} malformed; {len(q)} quarantined by group route")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
echo "kafka_nul: ok"
