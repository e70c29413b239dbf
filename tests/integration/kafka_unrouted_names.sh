#!/usr/bin/env bash
# Kafka source routed by a field: the unrouted records of two groups never share a file.
# Records naming no usable table are quarantined at once, one file per message, under
# kafka-unrouted/<source>/. The file was named <group>-<topic>-<partition>-<offset>: two
# servers whose sources share the name `route`, one in group a-b on topic c and one in
# group a on topic b-c, both wrote a-b-c-0-<offset>.ndjson, and the second message
# replaced the first one's records. Now the parts are joined by '+' (a topic name holds
# none, so the name is read from the right): a-b+c+0+<offset> and a+b-c+0+<offset>.
# Each topic has 100 events, every 10th without event_type: all 20 unrouted records are in
# the quarantine once, with their topic and offset, and every other event in its table once.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
for t in c b-c; do
  "$FLOE" gen --count 100 --seed $((${#t} + 70)) -o "$tmp/gen-$t.ndjson" >/dev/null
  python3 - "$tmp/gen-$t.ndjson" "$tmp/ev-$t.ndjson" <<'PY'
import json, sys
out = []
for i, l in enumerate(open(sys.argv[1]).read().split("\n")[:-1], 1):
    e = json.loads(l)
    if i % 10 == 1:
        del e["event_type"]
    out.append(json.dumps(e, separators=(",", ":")))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
done
mock_start 1
mock topic c 1
mock topic b-c 1
mock produce c "$tmp/ev-c.ndjson"
mock produce b-c "$tmp/ev-b-c.ndjson"
for s in "x a-b c" "y a b-c"; do
  read -r node group topic <<<"$s"
  {
    server_section "$node"
    cat <<CONF
$(source_section route "$topic" "$group" "shop.ev_{field:event_type}" commit_interval=500ms \
    kafka.session.timeout.ms=6000 kafka.heartbeat.interval.ms=500)
CONF
    for t in page_view click search add_to_cart purchase login view_item scroll; do
      printf '[table shop.ev_%s]\nschema = %s\n' "$t" "$tmp/schema.json"
    done
  } > "$tmp/$node.conf"
done
node_start x "$tmp/x.conf"
node_start y "$tmp/y.conf"
for node in x y; do
  for _ in $(seq 300); do
    m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-$node")/metrics") || fail "metrics of $node"
    q=$(echo "$m" | sed -n 's/^floe_kafka_quarantined_total{source="route"} //p')
    [ "${q:-0}" = 10 ] && break
    sleep 0.2
  done
  [ "${q:-0}" = 10 ] || fail "node $node quarantined ${q:-0} records, expected 10"
done
node_stop x
node_stop y
python3 - "$tmp" <<'PY' || fail "the unrouted quarantine"
import collections, glob, json, os, sys
d = sys.argv[1]
got = collections.Counter()
files = sorted(glob.glob(f"{d}/wh/_quarantine/kafka-unrouted/route/*.ndjson"))
for f in files:
    for l in open(f, "rb"):
        q = json.loads(l)
        got[(q["source"], q["offset"])] += 1
want = collections.Counter({(f"kafka:{t}/0", o): 1 for t in ("c", "b-c") for o in range(0, 100, 10)})
if got != want:
    sys.exit(f"{sum(got.values())} records, expected 20: missing {sorted(set(want) - set(got))[:5]}; "
             f"files {[os.path.basename(f) for f in files][:6]}")
PY
echo "kafka_unrouted_names: ok"
