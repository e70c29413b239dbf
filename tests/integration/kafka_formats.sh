#!/usr/bin/env bash
# Kafka source: message formats and metadata columns. One consumer takes a topic of 6
# partitions with format = array (each message a JSON array of 3 events; some messages are
# not arrays, some are empty) into a table whose schema has the metadata columns
# (_topic, _partition, _offset, _key, _ts, _headers): every event of every array is in the
# table once with its message's topic, partition, offset, key, timestamp and headers; the
# messages that are not arrays and the empty ones are quarantined whole, each once, with
# their topic, partition and offset.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/gen.json" >/dev/null
"$FLOE" gen --count 3000 --seed 9 -o "$tmp/ev.ndjson" >/dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(f"{d}/gen.json"))
def ids(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k in ("id", "element-id", "key-id", "value-id") and isinstance(v, int):
                yield v
            yield from ids(v)
    elif isinstance(x, list):
        for v in x:
            yield from ids(v)
nid = max(ids(s)) + 1
extra = [("_topic", "string"), ("_partition", "int"), ("_offset", "long"),
         ("_key", "string"), ("_ts", "timestamptz")]
for name, t in extra:
    s["fields"].append({"id": nid, "name": name, "required": False, "type": t}); nid += 1
s["fields"].append({"id": nid, "name": "_headers", "required": False,
                    "type": {"type": "map", "key-id": nid + 1, "key": "string",
                             "value-id": nid + 2, "value": "string", "value-required": False}})
json.dump(s, open(f"{d}/schema.json", "w"))
ev = open(f"{d}/ev.ndjson").read().split("\n")[:3000]
out, bad = [], []
for i in range(0, 3000, 3):
    n = len(out) + 1
    if n % 50 == 0:
        out.append('{"not": "an array"}'); bad.append(n)
    elif n % 77 == 0:
        out.append("   "); bad.append(n)
    # pretty-printed with tabs: the mock sends one message per line
    out.append("[\t  " + ",\t  ".join(ev[i:i + 3]) + "\t]")
open(f"{d}/msgs.ndjson", "w").write("\n".join(out) + "\n")
open(f"{d}/bad", "w").write("\n".join(map(str, bad)) + "\n")
PY
mock_start 3
mock topic events 6
mock produce events "$tmp/msgs.ndjson" snappy
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.tagged)
$(source_section arr events fmt shop.tagged format=array commit_interval=1s \
    column.topic=_topic column.partition=_partition column.offset=_offset column.key=_key \
    column.timestamp=_ts column.headers=_headers)
CONF
node_start a "$tmp/a.conf"
wait_rows shop.tagged 3000 120
node_stop a
FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" scan shop.tagged \
  --columns event_id,_topic,_partition,_offset,_key,_ts,_headers > "$tmp/rows.ndjson" ||
  fail "scan"
python3 - "$tmp" <<'PY' || fail "check"
import collections, glob, json, sys
d = sys.argv[1]
msgs = open(f"{d}/msgs.ndjson").read().split("\n")[:-1]
bad = {int(x) for x in open(f"{d}/bad").read().split()}
rows = [json.loads(l) for l in open(f"{d}/rows.ndjson")]
problems = []
ids = collections.Counter(r["event_id"] for r in rows)
if len(ids) != 3000 or max(ids.values()) != 1:
    problems.append(f"{len(rows)} rows, {len(ids)} distinct events (want 3000 once each)")
by_msg = collections.defaultdict(list)
for r in rows:
    if r["_topic"] != "events":
        problems.append(f"_topic {r['_topic']}")
    by_msg[(r["_partition"], r["_offset"])].append(r)
if len(by_msg) != 1000:
    problems.append(f"{len(by_msg)} (partition, offset) pairs, want 1000 messages")
def headers(h):
    if isinstance(h, list):  # a map printed as entries
        return {e["key"]: e["value"] for e in h}
    return h or {}
for (p, o), rs in by_msg.items():
    seq = headers(rs[0]["_headers"]).get("seq")
    if len(rs) != 3 or seq is None or any(r["_key"] != "k" + seq for r in rs) or \
            any(r["_ts"] is None for r in rs):
        problems.append(f"message {p}/{o}: {len(rs)} rows, key/headers/ts {rs[0]}")
        break
    line = int(seq)
    want = [e["event_id"] for e in json.loads(msgs[line - 1])]
    if sorted(want) != sorted(r["event_id"] for r in rs):
        problems.append(f"message {line}: rows are not its events")
q = []
for f in glob.glob(f"{d}/wh/_quarantine/shop.tagged/kafka-fmt-*.ndjson"):
    q += [json.loads(l) for l in open(f)]
got = sorted(x["record"] for x in q)
want = sorted(msgs[n - 1] for n in bad)
if got != want or len({(x["source"], x["offset"]) for x in q}) != len(q):
    problems.append(f"quarantine: {len(got)} records, want {len(want)}: {got[:2]} vs {want[:2]}")
print(f"kafka_formats: {len(rows)} rows of {len(by_msg)} messages, {len(q)} quarantined")
for p in problems[:5]:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
echo "kafka_formats: ok"
