#!/usr/bin/env bash
# floe serve in evolve mode: an event the post rejects never changes the table's schema.
# The table is evolved only from the records the evolved schema accepts (issue 23,
# adversary r11: a rejected event's new fields were added all the same):
#  - a record whose known field has the wrong type, with a new field: rejected, its field
#    not added (before or after the known field in the record);
#  - a new field whose value is out of range for the type inferred for it (1e400);
#  - v2: a new field whose value loses the vote on its type (a string among numbers),
#    beside another new field only that record has;
#  - a malformed line with a new field;
#  - a new field whose object repeats a key, and a new field given twice: rejected with
#    the reason duplicate_key (adversary adv23e D4: they said unknown_field);
#  - the accepted records' new fields are added, and their values land; format v2 and v3.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
start_on_v2_v3
post() { # TABLE FILE EXPECTED_ACCEPTED EXPECTED_REJECTED
  local code
  code=$(curl -s -o "$tmp/answer" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/ns.$1/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$2")
  [ "$code" = 200 ] || fail "POST $2 to ns.$1: $code $(cat "$tmp/answer")"
  grep -q "\"accepted\":$3,\"rejected\":$4" "$tmp/answer" ||
    fail "ns.$1 $2: expected $3 accepted, $4 rejected: $(cat "$tmp/answer")"
}
cat > "$tmp/b1.ndjson" <<'J'
{"bad1":1,"id":"not a long"}
{"id":"not a long","bad2":1}
{"id":2,"bad3":1e400}
{"id":3,"bad4":[1,
{"id":4,"ok1":"x"}
J
cat > "$tmp/b3.ndjson" <<'J'
{"id":8,"dup1":{"k":1,"k":2}}
{"id":9,"dup2":{"a":1},"dup2":{"a":"x"}}
{"id":10,"ok2":{"k":1}}
J
cat > "$tmp/b2.ndjson" <<'J'
{"id":5,"num":1}
{"id":6,"num":2}
{"id":7,"num":"three","bad5":true}
J
for t in v2 v3; do
  post $t "$tmp/b1.ndjson" 1 4
  "$FLOE" table schema ns.$t > "$tmp/schema.$t"
  grep -q 'bad' "$tmp/schema.$t" &&
    fail "ns.$t: a rejected event's field was added: $(cat "$tmp/schema.$t")"
  grep -q 'ok1: string' "$tmp/schema.$t" ||
    fail "ns.$t: the accepted event's field was not added: $(cat "$tmp/schema.$t")"
  post $t "$tmp/b3.ndjson" 1 2
  python3 - "$tmp/answer" <<'PY' || fail "ns.$t b3: reasons: $(cat "$tmp/answer")"
import json, sys
errors = json.load(open(sys.argv[1]))["errors"]
assert [(e["index"], e["reason"]) for e in errors] == [(0, "duplicate_key"), (1, "duplicate_key")], errors
assert "duplicate object key" in errors[0]["message"] and '"k"' in errors[0]["message"], errors
assert '"dup2"' in errors[1]["message"], errors
PY
  "$FLOE" table schema ns.$t > "$tmp/schema.$t"
  grep -q 'dup' "$tmp/schema.$t" &&
    fail "ns.$t: a rejected event's field was added: $(cat "$tmp/schema.$t")"
  grep -q 'ok2' "$tmp/schema.$t" ||
    fail "ns.$t: the accepted event's field was not added: $(cat "$tmp/schema.$t")"
done
# v2: num is a long (two to one), the third record is rejected and bad5 not added; v3:
# num is a variant and all three land
post v2 "$tmp/b2.ndjson" 2 1
post v3 "$tmp/b2.ndjson" 3 0
"$FLOE" table schema ns.v2 > "$tmp/schema.v2"
grep -q 'bad5' "$tmp/schema.v2" &&
  fail "ns.v2: a rejected event's field was added: $(cat "$tmp/schema.v2")"
grep -q 'num: long' "$tmp/schema.v2" || fail "ns.v2: num: $(cat "$tmp/schema.v2")"
"$FLOE" table schema ns.v3 > "$tmp/schema.v3"
grep -q 'bad5: boolean' "$tmp/schema.v3" || fail "ns.v3: bad5: $(cat "$tmp/schema.v3")"
flush_wait
stop_server
"$FLOE" scan ns.v2 > "$tmp/rows.v2" || fail "scan ns.v2"
python3 - "$tmp/rows.v2" <<'PY' || fail "ns.v2: rows differ: $(cat "$tmp/rows.v2")"
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["id"])
assert [r["id"] for r in rows] == [4, 5, 6, 10], rows
assert rows[0]["ok1"] == "x" and rows[1]["num"] == 1 and rows[2]["num"] == 2, rows
assert rows[3]["ok2"] == {"k": 1}, rows
PY
echo "serve_evolve_rejected: ok"
