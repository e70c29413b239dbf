#!/usr/bin/env bash
# floe serve in evolve mode (the embedded default: no configuration, the table created on
# its first post): a later batch brings a new top-level field, a new field inside a
# struct, a new field inside the structs of a list and new fields two structs deep (JSON
# objects are inferred as structs); each becomes an optional column with a fresh id (schema update commit), the
# records keep every value (nothing counted as unknown and dropped), and the older rows
# read back with nulls there. A value of the wrong type is quarantined, not evolved. The
# startup log says that tables are created on their first post, and how to turn it off.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

start_server --warehouse "$tmp/wh" --listen 127.0.0.1:0
grep -q 'tables are created on their first post.*to turn it off, start with --config FILE' \
  "$tmp/server.log" || fail "the startup log does not state auto-creation"
url="http://127.0.0.1:$port/v1/tables/app.events/events"
post() {
  code=$(curl -s -o "$tmp/answer" -w '%{http_code}' -XPOST "$url" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$1")
  [ "$code" = 200 ] || fail "POST $1: $code $(cat "$tmp/answer")"
}
cat > "$tmp/b1.ndjson" <<'J'
{"id":1,"ts":"2026-11-01T10:00:00Z","device":{"os":"ios"},"tags":[{"k":"a"}],"attrs":{"x":{"n":1}}}
{"id":2,"ts":"2026-11-01T10:00:01Z","device":{"os":"web"},"tags":[],"attrs":{}}
J
cat > "$tmp/b2.ndjson" <<'J'
{"id":3,"ts":"2026-11-01T10:00:02Z","device":{"os":"android","model":"pixel"},"tags":[{"k":"b","v":7}],"attrs":{"y":{"n":2,"w":"deep"}},"amount":12.5}
J
cat > "$tmp/b3.ndjson" <<'J'
{"id":4,"ts":"2026-11-01T10:00:03Z","device":{"os":"ios","model":{"not":"a string"}}}
{"id":5,"ts":"2026-11-01T10:00:04Z","device":{"os":"ios","model":"se"},"amount":3}
J
post "$tmp/b1.ndjson"
post "$tmp/b2.ndjson"
grep -q '"accepted":1' "$tmp/answer" || fail "batch 2 not accepted: $(cat "$tmp/answer")"
post "$tmp/b3.ndjson"
grep -q '"accepted":1' "$tmp/answer" || fail "batch 3: one accepted expected: $(cat "$tmp/answer")"
grep -q '"rejected":1' "$tmp/answer" || fail "batch 3: one rejected expected: $(cat "$tmp/answer")"
curl -sf "http://127.0.0.1:$port/metrics" > "$tmp/metrics.txt" || fail "metrics"
grep -q '^floe_unknown_fields_total{table="app.events"} 0$' "$tmp/metrics.txt" ||
  fail "fields counted as unknown (dropped): $(grep unknown_fields "$tmp/metrics.txt")"
grep -q '^floe_schema_updates_total{table="app.events"} [1-9]' "$tmp/metrics.txt" ||
  fail "no schema update"
flush_wait
stop_server

meta=$(ls "$tmp"/wh/app/events/metadata/*.metadata.json | sort | tail -1)
"$FLOE" scan "$meta" > "$tmp/rows.ndjson" || fail "scan"
python3 - "$tmp/rows.ndjson" "$meta" <<'PY' || fail "rows or schema differ"
import json, sys
rows = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
assert sorted(rows) == [1, 2, 3, 5], sorted(rows)
r3, r1, r5 = rows[3], rows[1], rows[5]
assert r3["device"] == {"os": "android", "model": "pixel"}, r3["device"]
assert r3["amount"] == 12.5, r3
assert r3["tags"] == [{"k": "b", "v": 7}], r3["tags"]
assert r3["attrs"].get("x") is None and r3["attrs"]["y"] == {"n": 2, "w": "deep"}, r3["attrs"]
assert r1["device"].get("model") is None and r1.get("amount") is None, r1
assert r1["tags"][0].get("v") is None and r1["attrs"]["x"] == {"n": 1}, r1
assert r1["attrs"].get("y") is None, r1
assert r5["device"]["model"] == "se" and r5["amount"] == 3, r5
md = json.load(open(sys.argv[2]))
schema = [s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"]][0]
ids = []
def walk(t):
    if isinstance(t, dict):
        if t.get("type") == "struct":
            for f in t["fields"]:
                ids.append(f["id"]); walk(f["type"])
        elif t.get("type") == "list":
            ids.append(t["element-id"]); walk(t["element"])
        elif t.get("type") == "map":
            ids.extend([t["key-id"], t["value-id"]]); walk(t["key"]); walk(t["value"])
walk(schema)
assert len(ids) == len(set(ids)), ("duplicate field ids", ids)
assert max(ids) <= md["last-column-id"], (max(ids), md["last-column-id"])
by = {f["name"]: f for f in schema["fields"]}
assert not by["amount"]["required"]
model = [f for f in by["device"]["type"]["fields"] if f["name"] == "model"][0]
assert not model["required"] and model["type"] == "string", model
PY
ls "$tmp"/wh/_quarantine/app.events/* >/dev/null 2>&1 || fail "the mistyped record is not in the quarantine"
echo "serve_evolve: ok"
