#!/usr/bin/env bash
# floe serve into a format v3 table whose variant column is shredded with
# variant.shredding=auto: every accepted event reaches the table once and reads back as
# posted, also objects holding a key with a NUL beside the key before the NUL
# ("a\u0000b" and "a"): such a key is never shredded (a NUL would end the shredded
# field's name; before, the compaction's file was refused with "duplicate field name").
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
export FLOE_WAREHOUSE="$tmp/wh"
"$FLOE" namespace create ns >/dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"payload","required":false,"type":"variant"}]}' > "$tmp/s.json"
"$FLOE" table create ns.t --schema "$tmp/s.json" --property format-version=3 \
  --property variant.shredding=auto >/dev/null
python3 - "$tmp/in.ndjson" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(200):
        p = {"a\u0000b": i * 10, "a": i, "n": {"x\u0000": "s%d" % i, "x": i % 7}}
        if i % 3 == 0:
            p["\u0000"] = True
        f.write(json.dumps({"id": i, "payload": p}) + "\n")
PY
start_server --warehouse "$tmp/wh" --listen 127.0.0.1:0
code=$(curl -s -o "$tmp/answer" -w '%{http_code}' -XPOST \
  "http://127.0.0.1:$port/v1/tables/ns.t/events" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$tmp/in.ndjson")
[ "$code" = 200 ] || fail "POST: $code $(cat "$tmp/answer")"
grep -q '"accepted":200,"rejected":0' "$tmp/answer" || fail "answer: $(cat "$tmp/answer")"
flush_wait
stop_server
! ls "$tmp"/wh/_quarantine/ns.t/* >/dev/null 2>&1 ||
  fail "events quarantined: $(cat "$tmp"/wh/_quarantine/ns.t/* | cut -c1-300)"
"$FLOE" scan ns.t > "$tmp/rows.ndjson" || fail "scan"
python3 - "$tmp/in.ndjson" "$tmp/rows.ndjson" <<'PY' || fail "rows differ from the posted events"
import json, sys
want = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["id"])
got = sorted((json.loads(l) for l in open(sys.argv[2])), key=lambda r: r["id"])
assert len(got) == len(want), (len(got), len(want))
for w, g in zip(want, got):
    assert w == g, (w, g)
PY
# the table's data files were written shredded: paths without a NUL only
files=$(find "$tmp/wh" -path '*/data/*.parquet' | grep -v _landing)
[ -n "$files" ] || fail "no data files"
for f in $files; do
  "$FLOE" inspect "$f" > "$tmp/inspect.txt" || fail "inspect $f"
  grep -q 'typed_value' "$tmp/inspect.txt" || fail "$f is not shredded: $(head -40 "$tmp/inspect.txt")"
done
echo "serve_variant_auto: ok"
