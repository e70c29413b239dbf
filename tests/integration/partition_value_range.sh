#!/usr/bin/env bash
# partition_value_range.sh - a record whose partition value cannot be made (hour() of a
# microsecond timestamp given as a JSON integer past ~ +-7.7e18: the hour must fit an
# int) is rejected on its own, to the quarantine with its line and the reason; the other
# records of the same input or post are kept. Before, convert and append failed as a
# whole ("partition field ts_hour: ... out of range", nothing written) and serve refused
# the whole post.
#   - floe convert -p "hour(ts)": the three records past either bound are quarantined
#     (line and reason named), the three at the bounds are written, exit 0;
#   - floe append to a table partitioned by hour(ts): the same three rows committed;
#   - floe serve: the post is answered 200 with 3 accepted, 3 rejected;
#   - unpartitioned (no hour() partition): all six are taken, as before.
set -euo pipefail
name=partition_value_range oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"

cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"rid","required":true,"type":"long"},
{"id":2,"name":"ts","required":false,"type":"timestamptz"}]}
JSON
# the hour bounds: [-2^31 h, 2^31 h) in microseconds = [-7730941132800000000, 7730941132800000000)
cat > "$tmp/in.ndjson" <<'EOF2'
{"rid":10,"ts":9223372036854775807}
{"rid":13,"ts":1}
{"rid":14,"ts":-7730941132800000000}
{"rid":15,"ts":-7730941132800000001}
{"rid":16,"ts":7730941132799999999}
{"rid":17,"ts":7730941132800000000}
EOF2
kept='13,14,16'

rids() { # the rids of floe scan's NDJSON on stdin, sorted, comma-separated
  python3 -c 'import json,sys; print(",".join(str(r) for r in sorted(json.loads(l)["rid"] for l in sys.stdin if l.strip())))'
}

# convert
rc=0
"$floe" convert --schema "$tmp/s.json" -p "hour(ts)" -o "$tmp/cv" "$tmp/in.ndjson" > "$tmp/cv.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "convert: exit $rc: $(cat "$tmp/cv.out")"
q=$tmp/cv/_quarantine/quarantine.ndjson
if [ -f "$q" ]; then
  python3 - "$q" > "$tmp/q.txt" <<'PY' || fail "convert quarantine: $(cat "$tmp/q.txt")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
lines = sorted(r["line"] for r in rows)
assert lines == [1, 4, 6], lines
for r in rows:
    assert r["reason"].startswith("out_of_range:"), r
    assert "hour" in r["reason"] and "field 'ts'" in r["reason"], r
    assert r["source"].endswith("in.ndjson"), r
print("ok")
PY
else
  fail "convert: no quarantine file: $(cat "$tmp/cv.out")"
fi
got=$(for f in $(find "$tmp/cv" -name '*.parquet'); do "$floe" cat "$f"; done | rids)
[ "$got" = "$kept" ] || fail "convert wrote rids $got, expected $kept"

# append
"$floe" table create ns.h --schema "$tmp/s.json" --partition "hour(ts)" > /dev/null
rc=0
"$floe" append ns.h "$tmp/in.ndjson" > "$tmp/ap.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "append: exit $rc: $(cat "$tmp/ap.out")"
got=$("$floe" scan ns.h | rids)
[ "$got" = "$kept" ] || fail "append committed rids $got, expected $kept: $(cat "$tmp/ap.out")"

# unpartitioned: every value is a timestamp
"$floe" convert --schema "$tmp/s.json" -o "$tmp/cu" "$tmp/in.ndjson" > "$tmp/cu.out" 2>&1 ||
  fail "unpartitioned convert: $(cat "$tmp/cu.out")"
got=$(for f in $(find "$tmp/cu" -name '*.parquet'); do "$floe" cat "$f"; done | rids)
[ "$got" = "10,13,14,15,16,17" ] || fail "unpartitioned convert wrote rids $got"

# serve
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/whs
wal_dir = $tmp/wal
compact = false
maintain = false
[table ns.s]
schema = $tmp/s.json
partition = hour(ts)
CONF
"$floe" serve --config "$tmp/serve.conf" --port-file "$tmp/port" 2> "$tmp/server.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 600); do [ -s "$tmp/port" ] && break; sleep 0.05; done
if [ -s "$tmp/port" ]; then
  code=$(curl -s -o "$tmp/ans.json" -w '%{http_code}' -XPOST -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$tmp/in.ndjson" "http://127.0.0.1:$(cat "$tmp/port")/v1/tables/ns.s/events")
  [ "$code" = 200 ] || fail "serve post: HTTP $code $(head -c 300 "$tmp/ans.json")"
  grep -q '"accepted":3,"rejected":3' "$tmp/ans.json" || fail "serve post: $(head -c 300 "$tmp/ans.json")"
else
  fail "floe serve did not start: $(cat "$tmp/server.log")"
fi

[ "$fails" = 0 ] || exit 1
echo "partition_value_range: ok"
