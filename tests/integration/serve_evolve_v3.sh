#!/usr/bin/env bash
# floe serve in evolve mode on format v3 tables: every event a post accepts reaches the
# table, exactly once, and nothing goes to the quarantine.
#  - a new field inside a struct the table has (and inside the structs of a list it has)
#    whose kind varies between events (1, then "x") is added as `variant` (the struct
#    cannot become a variant as a whole, as a new object would); on a v2 table it is added
#    as long and the "x" events are rejected at post time.
#  - a new timestamp field whose values carry nanoseconds is added as timestamptz_ns (the
#    digits kept), as `floe schema infer --format-version 3` infers it.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
export FLOE_WAREHOUSE="$tmp/wh"
"$FLOE" namespace create ns >/dev/null
cat > "$tmp/s.json" <<'J'
{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"s","required":false,"type":{"type":"struct","fields":[{"id":3,"name":"a","required":false,"type":"long"}]}},
 {"id":4,"name":"l","required":false,"type":{"type":"list","element-id":5,"element-required":false,
  "element":{"type":"struct","fields":[{"id":6,"name":"a","required":false,"type":"long"}]}}}]}
J
"$FLOE" table create ns.t --schema "$tmp/s.json" --property format-version=3 >/dev/null
"$FLOE" table create ns.t2 --schema "$tmp/s.json" --property format-version=2 >/dev/null
start_server --warehouse "$tmp/wh" --listen 127.0.0.1:0
post() { # post TABLE FILE: the answer in $tmp/answer
  code=$(curl -s -o "$tmp/answer" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/$1/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$2")
  [ "$code" = 200 ] || fail "POST $1 $2: $code $(cat "$tmp/answer")"
}
expect() { grep -q "$1" "$tmp/answer" || fail "$2: expected $1, got $(cat "$tmp/answer")"; }

# 1. a new kind-varying field inside an existing struct / list of structs
cat > "$tmp/nested.ndjson" <<'J'
{"id":2,"s":{"a":1,"b":1}}
{"id":3,"s":{"a":2,"b":"x"}}
{"id":4,"l":[{"a":1,"b":1},{"a":2,"b":"x"}]}
J
post ns.t "$tmp/nested.ndjson"
expect '"accepted":3,"rejected":0' "nested v3"
post ns.t2 "$tmp/nested.ndjson"
expect '"accepted":1,"rejected":2' "nested v2"
grep -q "field 's.b': expected long" "$tmp/answer" || fail "v2: no reason for s.b: $(cat "$tmp/answer")"

# 2. nanosecond timestamps
printf '{"id":5,"w":"2026-01-01T00:00:00.123456789Z"}\n' > "$tmp/ns.ndjson"
post ns.t "$tmp/ns.ndjson"
expect '"accepted":1,"rejected":0' "nanoseconds"
"$FLOE" schema infer --format-version 3 "$tmp/ns.ndjson" | grep -q '"timestamptz_ns"' ||
  fail "schema infer --format-version 3 does not infer timestamptz_ns"
"$FLOE" schema infer "$tmp/ns.ndjson" | grep -q '"timestamptz"' ||
  fail "schema infer (v2) does not infer timestamptz"

flush_wait
stop_server
! ls "$tmp"/wh/_quarantine/ns.t/* >/dev/null 2>&1 ||
  fail "accepted events quarantined: $(cat "$tmp"/wh/_quarantine/ns.t/* | cut -c1-300)"
"$FLOE" table schema ns.t > "$tmp/schema.txt"
"$FLOE" scan ns.t > "$tmp/rows.ndjson" || fail "scan"
"$FLOE" scan ns.t2 > "$tmp/rows2.ndjson" || fail "scan v2"
python3 - "$tmp/rows.ndjson" "$tmp/rows2.ndjson" <<'PY' || fail "rows differ: $(cat "$tmp/schema.txt")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ids = sorted(r["id"] for r in rows)
assert ids == [2, 3, 4, 5], ids
by = {r["id"]: r for r in rows}
assert by[2]["s"] == {"a": 1, "b": 1}, by[2]
assert by[3]["s"] == {"a": 2, "b": "x"}, by[3]
assert by[4]["l"] == [{"a": 1, "b": 1}, {"a": 2, "b": "x"}], by[4]
assert by[5]["w"].startswith("2026-01-01T00:00:00.123456789"), by[5]
rows2 = [json.loads(l) for l in open(sys.argv[2])]
assert sorted(r["id"] for r in rows2) == [2], rows2
PY
grep -q 'b: variant' "$tmp/schema.txt" || fail "s.b is not a variant: $(cat "$tmp/schema.txt")"
grep -q 'w: timestamptz_ns' "$tmp/schema.txt" || fail "w is not timestamptz_ns: $(cat "$tmp/schema.txt")"
echo "serve_evolve_v3: ok"
