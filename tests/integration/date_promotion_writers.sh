#!/usr/bin/env bash
# date_promotion_writers.sh - after date -> timestamp_ns (format v3), the commands that
# plan a table's head as a writer sees it bind to the current schema, and nothing computes
# a timestamp out of the nanosecond range by overflow (issue 23, adversary r3):
#  1. floe health on a table partitioned by year(d) whose largest partition is the year
#     3000 (a date past 2262-04-11): no point query on a wrapped-around literal (it built
#     '2084-07-20T23:34:33.709551616' from year 3000 before); with the largest partition in
#     range, the point query runs on d = '<its start>T00:00:00.000000000' (the planner
#     refused it before: it bound d as the date of the snapshot's schema).
#  2. floe delete --where on the promoted column takes a timestamp literal (it was bound
#     to the snapshot's schema, where d is a date), and deletes the row it names.
#  3. floe delete --where on a renamed column takes the new name (the same cause).
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "date_promotion_writers: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"d","required":false,"type":"date"}]}
JSON
"$floe" namespace create ns > /dev/null

# ---- 1. health ---------------------------------------------------------------------------
"$floe" table create ns.far --schema "$tmp/s.json" --property format-version=3 --partition "year(d)" > /dev/null
printf '{"id":1,"d":"3000-01-01"}\n{"id":2,"d":"3000-02-01"}\n{"id":3,"d":"3000-03-01"}\n' > "$tmp/far.ndjson"
printf '{"id":4,"d":"2020-01-01"}\n' > "$tmp/near.ndjson"
"$floe" append ns.far "$tmp/far.ndjson" > /dev/null
"$floe" append ns.far "$tmp/far.ndjson" > /dev/null
"$floe" append ns.far "$tmp/near.ndjson" > /dev/null
"$floe" table schema ns.far widen d timestamp_ns > /dev/null
"$floe" health ns.far --json > "$tmp/h.json" || fail "health ns.far"
python3 - "$tmp/h.json" <<'PY' || fail "health ns.far: $(head -c 3000 "$tmp/h.json")"
import json, sys
h = json.load(open(sys.argv[1]))
text = json.dumps(h)
assert '2084-07-20' not in text, 'a wrapped-around literal'
assert 'does not fit column' not in text, 'the planner refused the point query'
assert h['current']['planning']['error'] is None, h['current']['planning']
f = h['current']['requests']['point_query']['filter']
assert f is None or '3000' in f, f
PY

"$floe" table create ns.near --schema "$tmp/s.json" --property format-version=3 --partition "year(d)" > /dev/null
printf '{"id":1,"d":"2020-01-01"}\n{"id":2,"d":"2020-06-01"}\n{"id":3,"d":"2020-12-31"}\n' > "$tmp/n.ndjson"
"$floe" append ns.near "$tmp/n.ndjson" > /dev/null
"$floe" table schema ns.near widen d timestamp_ns > /dev/null
"$floe" health ns.near --json > "$tmp/h.json" || fail "health ns.near"
python3 - "$tmp/h.json" <<'PY' || fail "health ns.near: $(head -c 3000 "$tmp/h.json")"
import json, sys
h = json.load(open(sys.argv[1]))
text = json.dumps(h)
assert 'does not fit column' not in text, 'the planner refused the point query'
assert h['current']['planning']['error'] is None, h['current']['planning']
pq = h['current']['requests']['point_query']
assert pq['filter'] == "d = '2020-01-01T00:00:00.000000000'", pq
PY

# ---- 2. delete on the promoted column ----------------------------------------------------
"$floe" delete ns.near --where "d = '2020-06-01T00:00:00'" > "$tmp/out" 2>&1 ||
  fail "delete on the promoted column: $(cat "$tmp/out")"
"$floe" scan ns.near > "$tmp/rows"
python3 - "$tmp/rows" <<'PY' || fail "rows after delete: $(cat "$tmp/rows")"
import json, sys
assert sorted(json.loads(l)['id'] for l in open(sys.argv[1])) == [1, 3]
PY

# ---- 3. delete on a renamed column -------------------------------------------------------
"$floe" table schema ns.near rename-column id key > /dev/null
"$floe" delete ns.near --where "key = 3" > "$tmp/out" 2>&1 ||
  fail "delete on the renamed column: $(cat "$tmp/out")"
[ "$("$floe" scan ns.near)" = '{"key":1,"d":"2020-01-01T00:00:00.000000000"}' ] ||
  fail "rows after the second delete: $("$floe" scan ns.near)"
echo "date_promotion_writers: ok"
