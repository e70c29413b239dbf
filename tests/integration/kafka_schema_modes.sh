#!/usr/bin/env bash
# Kafka source: schema modes as on the HTTP path. One topic of 3 partitions is consumed by
# three sources (groups) of one floe serve into three tables of one schema (id, name,
# info {os}), schema_mode strict, evolve and ignore. Among the messages: a new top-level
# field (color), a new field inside the struct (info.model) and a value of the wrong type
# (name 17). evolve: the new fields become optional columns and keep their values, the
# older rows read null there; ignore: the unknown fields are dropped and the records kept;
# strict: the records with unknown fields are quarantined; the mistyped record is
# quarantined in every mode. Each table's rows and quarantine are asserted whole (each
# record once, with its topic, partition and offset). Batches convert ahead from their
# first 4 KiB (FLOE_TEST_KAFKA_AHEAD_BYTES): strict and ignore do, evolve converts at the
# commit without starting a conversion ahead at all (its log says none gave up).
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=debug FLOE_TEST_KAFKA_AHEAD_BYTES=4096
cat > "$tmp/schema.json" <<'J'
{"type": "struct", "schema-id": 0, "fields": [
  {"id": 1, "name": "id", "required": true, "type": "long"},
  {"id": 2, "name": "name", "required": false, "type": "string"},
  {"id": 3, "name": "info", "required": false, "type": {"type": "struct", "fields": [
    {"id": 4, "name": "os", "required": false, "type": "string"}]}}]}
J
python3 - "$tmp/msgs.ndjson" <<'PY'
import json, sys
out = []
for i in range(1, 601):
    r = {"id": i, "name": f"n{i}", "info": {"os": "ios"}}
    if i % 10 == 3:
        r["color"] = f"c{i}"            # a new top-level field
    elif i % 10 == 6:
        r["info"]["model"] = f"m{i}"    # a new field inside the struct
    elif i % 100 == 9:
        r["name"] = i                   # the wrong type
    out.append(json.dumps(r, separators=(",", ":")))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
scan_count() { # lib.sh's counts event_id, which these tables do not have
  FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" scan "$1" \
    --columns id 2>/dev/null | wc -l
}
mock_start 3
mock topic events 3
mock produce events "$tmp/msgs.ndjson" lz4
{
  server_section a
  for m in strict evolve ignore; do
    cat <<CONF
$(table_section "shop.$m" "schema_mode=$m")
$(source_section "$m" events "modes-$m" "shop.$m" commit_interval=1s)
CONF
  done
} > "$tmp/a.conf"
# strict: 600 - 60 (color) - 60 (model) - 6 (mistyped); evolve and ignore: 600 - 6
node_start a "$tmp/a.conf"
wait_rows shop.strict 474 120
wait_rows shop.evolve 594 120
wait_rows shop.ignore 594 120
curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics" > "$tmp/metrics" || fail "metrics"
for m in strict ignore; do
  grep -q "^floe_kafka_commits_converted_ahead_total{source=\"$m\"} [1-9]" "$tmp/metrics" ||
    fail "$m: no commit converted ahead"
done
grep -q '^floe_kafka_commits_converted_ahead_total{source="evolve"} 0$' "$tmp/metrics" ||
  fail "evolve: a commit converted ahead"
node_stop a
! grep -q "not converted ahead: evolve mode" "$tmp/node-a.log" ||
  fail "evolve: a conversion ahead was started and gave up"
for m in strict evolve ignore; do
  FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" scan "shop.$m" \
    > "$tmp/rows-$m.ndjson" || fail "scan shop.$m"
done
python3 - "$tmp" <<'PY' || fail "check"
import collections, glob, json, sys
d = sys.argv[1]
msgs = {json.loads(l)["id"]: l for l in open(f"{d}/msgs.ndjson").read().split("\n") if l}
problems = []
def want_row(i, mode):
    r = json.loads(msgs[i])
    if mode != "evolve":
        r.pop("color", None)
        r["info"].pop("model", None)
    return r
for mode in ("strict", "evolve", "ignore"):
    rows = [json.loads(l) for l in open(f"{d}/rows-{mode}.ndjson")]
    ids = collections.Counter(r["id"] for r in rows)
    bad = {i for i, l in msgs.items() if not isinstance(json.loads(l)["name"], str)}
    unknown = {i for i, l in msgs.items() if "color" in l or "model" in l}
    keep = set(msgs) - bad - (unknown if mode == "strict" else set())
    if set(ids) != keep or max(ids.values()) != 1:
        problems.append(f"{mode}: {len(rows)} rows, {len(ids)} ids, want {len(keep)} once each")
    for r in rows:
        got = {k: v for k, v in r.items() if v is not None}
        if isinstance(got.get("info"), dict):
            got["info"] = {k: v for k, v in got["info"].items() if v is not None}
        if got != want_row(r["id"], mode):
            problems.append(f"{mode}: row {got} != {want_row(r['id'], mode)}")
            break
    cols = set().union(*(r.keys() for r in rows))
    if mode == "evolve":
        if "color" not in cols or not any(r["info"].get("model") for r in rows):
            problems.append(f"evolve: no color or info.model column: {sorted(cols)}")
        if any(r.get("color") for r in rows if r["id"] % 10 != 3):
            problems.append("evolve: color set on older rows")
    elif "color" in cols or any("model" in (r["info"] or {}) for r in rows):
        problems.append(f"{mode}: the table gained the unknown fields: {sorted(cols)}")
    md = sorted(glob.glob(f"{d}/wh/shop/{mode}/metadata/*.metadata.json"))[-1]
    md = json.load(open(md))
    schema = [s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"]][0]
    names = {f["name"] for f in schema["fields"]}
    if mode == "evolve" and "color" not in names:
        problems.append(f"evolve: the schema has no color: {sorted(names)}")
    if mode != "evolve" and (names - {"id", "name", "info"}):
        problems.append(f"{mode}: the schema changed: {sorted(names)}")
    q = []
    for f in glob.glob(f"{d}/wh/_quarantine/shop.{mode}/kafka-modes-{mode}-*.ndjson"):
        q += [json.loads(l) for l in open(f)]
    qids = collections.Counter(json.loads(x["record"])["id"] for x in q)
    qwant = bad | (unknown if mode == "strict" else set())
    if set(qids) != qwant or (qids and max(qids.values()) != 1):
        problems.append(f"{mode}: quarantine {sorted(qids)[:8]}..., want {sorted(qwant)[:8]}...")
    for x in q:
        if x["record"] != msgs[json.loads(x["record"])["id"]] or \
                not str(x.get("source", "")).startswith("kafka:events/") or x.get("offset") is None:
            problems.append(f"{mode}: quarantined {x}")
            break
    print(f"kafka_schema_modes: {mode}: {len(rows)} rows, {len(q)} quarantined")
for p in problems[:8]:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
echo "kafka_schema_modes: ok"
