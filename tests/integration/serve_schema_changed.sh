#!/usr/bin/env bash
# floe serve (evolve mode) while another process changes the table's schema: a column the
# server added is dropped with `floe table schema ... drop-column`, then a column renamed.
# Posts the server accepted against the schema it had still carry the old field: at
# compaction such a record is quarantined with the reason (never committed with the field
# silently dropped), and the server adopts the table's current schema, so a later post
# with that field evolves the table again (a new optional column, fresh id) and keeps its
# value.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true

start_server --warehouse "$tmp/wh" --listen 127.0.0.1:0
url="http://127.0.0.1:$port/v1/tables/app.events/events"
post() {
  code=$(curl -s -o "$tmp/answer" -w '%{http_code}' -XPOST "$url" \
    -H 'Content-Type: application/x-ndjson' --data-binary "$1")
  [ "$code" = 200 ] || fail "POST $1: $code $(cat "$tmp/answer")"
  grep -q '"accepted":1' "$tmp/answer" || fail "POST $1: $(cat "$tmp/answer")"
  flush_wait
}
post '{"id":0,"s":"a","ts":"2026-12-01T00:00:00Z"}'
post '{"id":1,"s":"a","newcol":{"x":[1,2]},"ts":"2026-12-01T00:00:00Z"}'
"$FLOE" table schema app.events drop-column newcol > /dev/null || fail "drop-column"
# the server still knows newcol: accepted, then quarantined at compaction
post '{"id":2,"s":"a","newcol":{"x":[3]},"ts":"2026-12-01T00:00:00Z"}'
# the server has adopted the schema without newcol: newcol is new again
post '{"id":3,"s":"a","newcol":{"x":[4]},"ts":"2026-12-01T00:00:00Z"}'
"$FLOE" table schema app.events rename-column s s2 > /dev/null || fail "rename-column"
post '{"id":4,"s":"b","ts":"2026-12-01T00:00:00Z"}'
post '{"id":5,"s":"c","ts":"2026-12-01T00:00:00Z"}'
stop_server

"$FLOE" scan app.events > "$tmp/rows.ndjson" || fail "scan"
find "$tmp" -path '*quarantine*' -type f -name '*.ndjson' -exec cat {} + > "$tmp/quarantine.txt" || true
python3 - "$tmp/rows.ndjson" "$tmp/quarantine.txt" <<'PY' || fail "rows or quarantine differ"
import json, sys
rows = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
q = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
reasons = {json.loads(e["record"])["id"]: e["reason"] for e in q}
def quarantined(i, field):
    return f"unknown field '{field}'" in reasons.get(i, "")
# id 2 came with newcol after the drop: quarantined with its field, not committed without it
assert 2 not in rows, ("committed without newcol", rows.get(2))
assert quarantined(2, "newcol"), q
# id 3: the table evolved again and kept the value
assert rows[3].get("newcol") == {"x": [4]}, rows[3]
assert rows[1].get("newcol") is None, rows[1]  # dropped column: the old values are gone
# id 4 came with s after the rename to s2: quarantined, not s2 = null
assert 4 not in rows, ("committed without s", rows.get(4))
assert quarantined(4, "s"), q
# id 5: s is a new column again, s2 keeps the old values
assert rows[5].get("s") == "c", rows[5]
assert rows[0].get("s2") == "a", rows[0]
assert sorted(rows) == [0, 1, 3, 5], sorted(rows)
PY
echo "serve_schema_changed: ok"
