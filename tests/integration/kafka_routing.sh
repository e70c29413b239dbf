#!/usr/bin/env bash
# Kafka source routed by a field: table = shop.ev_{field:event_type}. A topic of 6
# partitions holds 8,000 generated events of 8 event types, and records that name no
# usable table: no event_type, a value that makes no table name ("bad.name", "has space"),
# a type without a table (no [table] section, auto_create off), and lines that are not
# JSON. Two consumers in one group, one killed (-9) midway and started again: each table
# ends with exactly the events of its type, once each; the unrouted records are each in
# the quarantine once (kafka-unrouted/<source>/), with their topic, partition and offset.
# Resume: after a stop, a second round of 2,000 events is taken by one consumer that
# fetches nothing of the first round (it starts from the tables' floors).
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 8000 --seed 11 -o "$tmp/gen1.ndjson" >/dev/null
"$FLOE" gen --count 2000 --seed 12 -o "$tmp/gen2.ndjson" >/dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
for name in ("1", "2"):
    out, bad = [], []
    for i, l in enumerate(open(f"{d}/gen{name}.ndjson").read().split("\n")[:-1], 1):
        e = json.loads(l)
        if i % 40 == 0:
            del e["event_type"]; bad.append(i)
        elif i % 53 == 0:
            e["event_type"] = "bad.name"; bad.append(i)
        elif i % 61 == 0:
            e["event_type"] = "has space"; bad.append(i)
        elif i % 67 == 0:
            e["event_type"] = "unconfigured"; bad.append(i)
        elif i % 71 == 0:
            out.append('{"event_type": "click", not json'); bad.append(i); continue
        out.append(json.dumps(e, separators=(",", ":")))
    open(f"{d}/ev{name}.ndjson", "w").write("\n".join(out) + "\n")
    open(f"{d}/bad{name}", "w").write("\n".join(map(str, bad)) + "\n")
PY
mock_start 3
mock topic events 6
mock produce events "$tmp/ev1.ndjson" gzip
conf() { # conf NODE
  {
    cat <<CONF
$(server_section "$1")
$(source_section route events routers "shop.ev_{field:event_type}" commit_interval=1s \
    kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500)
CONF
    for t in page_view click search add_to_cart purchase login view_item scroll; do
      printf '[table shop.ev_%s]\nschema = %s\n' "$t" "$tmp/schema.json"
    done
  } > "$tmp/$1.conf"
}
conf a; conf b
check() { # check EVENTS BAD [EVENTS BAD]: tables and quarantine exact
  python3 - "$tmp" "$FLOE" "$@" <<'PY'
import collections, glob, json, os, subprocess, sys
d, floe = sys.argv[1:3]
want, unrouted = collections.defaultdict(set), collections.Counter()
for ev, bl in zip(sys.argv[3::2], sys.argv[4::2]):
    lines = open(ev).read().split("\n")[:-1]
    bad = {int(x) for x in open(bl).read().split()}
    for i, l in enumerate(lines, 1):
        if i in bad:
            unrouted[l] += 1
        else:
            e = json.loads(l)
            want[e["event_type"]].add(e["event_id"])
env = dict(os.environ, FLOE_CATALOG_URI=f"{d}/wh/catalog.db", FLOE_WAREHOUSE=f"{d}/wh")
problems = []
for t, ids in sorted(want.items()):
    out = subprocess.run([floe, "scan", f"shop.ev_{t}", "--columns", "event_id,event_type"],
                         env=env, capture_output=True, text=True)
    rows = [json.loads(r) for r in out.stdout.split("\n") if r]
    got = collections.Counter(r["event_id"] for r in rows)
    if set(got) != ids or max(got.values(), default=1) != 1 or \
            any(r["event_type"] != t for r in rows):
        problems.append(f"shop.ev_{t}: {len(rows)} rows, {len(got)} distinct, want {len(ids)}"
                        f" ({len(set(got) - ids)} foreign, {len(ids - set(got))} missing)")
q = []
for f in glob.glob(f"{d}/wh/_quarantine/kafka-unrouted/route/routers+events+*.ndjson"):
    q += [json.loads(l) for l in open(f)]
got = collections.Counter(x["record"] for x in q)
if got != unrouted:
    problems.append(f"quarantine: {sum(got.values())} records, want {sum(unrouted.values())}")
if len({(x["source"], x["offset"]) for x in q}) != len(q) or \
        any(not x["source"].startswith("kafka:events/") or not x["reason"] for x in q):
    problems.append("quarantine: source/offset/reason wrong")
reasons = sorted({x["reason"].split(" (")[0][:40] for x in q})
print(f"kafka_routing: {sum(len(v) for v in want.values())} events in {len(want)} tables,"
      f" {len(q)} quarantined; reasons: {reasons}")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
}
valid1=$(( 8000 - $(wc -l <"$tmp/bad1") ))
total() {
  local n=0 c
  for t in page_view click search add_to_cart purchase login view_item scroll; do
    c=$(scan_count "shop.ev_$t"); n=$((n + c))
  done
  echo "$n"
}
node_start a "$tmp/a.conf"
node_start b "$tmp/b.conf"
for _ in $(seq 300); do [ "$(total)" -gt 1000 ] && break; sleep 0.2; done
node_kill a
node_start a "$tmp/a.conf"
for _ in $(seq 600); do [ "$(total)" -ge "$valid1" ] && break; sleep 0.2; done
sleep 2 # anything taken twice would show up now
node_stop a; node_stop b
check "$tmp/ev1.ndjson" "$tmp/bad1" || fail "round 1"
grep -q "unconfigured (not in the catalog" "$tmp"/wh/_quarantine/kafka-unrouted/route/* ||
  fail "no record quarantined for naming a table that does not exist"

# resume from the tables' floors: nothing of round 1 is fetched again
mock produce events "$tmp/ev2.ndjson" zstd
node_start a "$tmp/a.conf"
valid2=$(( valid1 + 2000 - $(wc -l <"$tmp/bad2") ))
for _ in $(seq 600); do [ "$(total)" -ge "$valid2" ] && break; sleep 0.2; done
sleep 2
m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics"
consumed=$(echo "$m" | sed -n 's/^floe_kafka_consumed_total{source="route"} //p')
[ "$consumed" = 2000 ] || fail "round 2 took $consumed messages, expected the 2000 new ones"
node_stop a
check "$tmp/ev1.ndjson" "$tmp/bad1" "$tmp/ev2.ndjson" "$tmp/bad2" || fail "round 2 (resume)"
echo "kafka_routing: ok"
