#!/usr/bin/env bash
# floe serve in evolve mode: an event the post acknowledges reaches the table; one whose
# new field the table cannot take is rejected in the post's answer, with the reason, never
# acknowledged and then sent to the quarantine by compaction.
#  - a number past int64 (18446744073709551616) in a new field: the field is added as
#    double and the event lands (jansson cannot parse it; inference reads it as a double);
#  - a number past double's range (1e400) in a new field: the field is added as double and
#    the event is rejected at post time, "out of range for double";
#  - an empty key (no column can be named so): the event is rejected at post time;
#  - format v2 and v3 alike; the other events of the same post land, exactly once.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
start_on_v2_v3
cat > "$tmp/events.ndjson" <<'J'
{"id":1,"big":18446744073709551616}
{"id":2,"x":1}
{"id":3,"r":1e400}
{"id":4,"":5}
{"id":5,"big":-18446744073709551617,"s":"a\"1e400"}
{"id":6,"r":2.5}
J
for t in v2 v3; do
  code=$(curl -s -o "$tmp/answer.$t" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/ns.$t/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$tmp/events.ndjson")
  [ "$code" = 200 ] || fail "POST ns.$t: $code $(cat "$tmp/answer.$t")"
  grep -q '"accepted":4,"rejected":2' "$tmp/answer.$t" ||
    fail "ns.$t: expected 4 accepted, 2 rejected: $(cat "$tmp/answer.$t")"
  grep -q "out of range for double" "$tmp/answer.$t" ||
    fail "ns.$t: no reason for 1e400: $(cat "$tmp/answer.$t")"
  grep -q "unknown field ''" "$tmp/answer.$t" ||
    fail "ns.$t: no reason for the empty key: $(cat "$tmp/answer.$t")"
done
flush_wait
stop_server
for t in v2 v3; do
  for f in "$tmp"/wh/_quarantine/ns.$t/compact-*; do
    [ -e "$f" ] && fail "ns.$t: acknowledged events quarantined by compaction: $(cut -c1-300 "$f")"
  done
  "$FLOE" scan ns.$t > "$tmp/rows.$t" || fail "scan ns.$t"
  "$FLOE" table schema ns.$t > "$tmp/schema.$t"
  grep -q 'big: double' "$tmp/schema.$t" || fail "ns.$t: big is not a double: $(cat "$tmp/schema.$t")"
  grep -q 'r: double' "$tmp/schema.$t" || fail "ns.$t: r is not a double: $(cat "$tmp/schema.$t")"
  python3 - "$tmp/rows.$t" <<'PY' || fail "ns.$t: rows differ"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {r["id"]: r for r in rows}
assert sorted(by) == [1, 2, 5, 6] and len(rows) == 4, rows
assert float(by[1]["big"]) == 18446744073709551616.0, by[1]
assert float(by[5]["big"]) == -18446744073709551617.0 and by[5]["s"] == 'a"1e400', by[5]
assert by[2]["x"] == 1 and by[6]["r"] == 2.5, (by[2], by[6])
PY
done
# floe schema infer reads such numbers as doubles too (it skipped their records before)
"$FLOE" schema infer "$tmp/events.ndjson" > "$tmp/inferred.json"
python3 - "$tmp/inferred.json" <<'PY' || fail "schema infer: $(cat "$tmp/inferred.json")"
import json, sys
f = {x["name"]: x["type"] for x in json.load(open(sys.argv[1]))["fields"]}
assert f.get("big") == "double" and f.get("r") == "double", f
PY
echo "serve_evolve_unknown: ok"
