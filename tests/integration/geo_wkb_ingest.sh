#!/usr/bin/env bash
# geo_wkb_ingest.sh - a geometry or geography column takes WKB only: a value that is
# base64 but not one well-formed WKB geometry (text, a truncated point, trailing bytes,
# an unknown type code, no bytes at all) is refused with the line and the field, and
# quarantined by floe convert, floe append and floe serve; it never reaches a data file.
#
#  1. floe convert: the bad lines are in the quarantine with their line number and
#     "field 'g': geometry value is not WKB" (or geography); the file holds the good rows
#     only; --strict fails naming the first bad line and the field, leaving no file.
#  2. floe append into a v3 table: the same lines quarantined, the good rows scanned back.
#  3. floe serve: the post's answer counts and names the rejected lines; the committed
#     rows are the good ones.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "geo_wkb_ingest: python3 needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# fail counts a check that failed and goes on (the count is the test's evidence); die stops
fails=0
fail() { echo "geo_wkb_ingest: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "geo_wkb_ingest: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"

cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"g","required":false,"type":"geometry"},
 {"id":3,"name":"gg","required":false,"type":"geography"}]}
JSON
# the NDJSON, built with struct so the test does not trust floe's WKB reader
python3 - "$tmp" <<'PY'
import base64, json, struct, sys
d = sys.argv[1]
b64 = lambda b: base64.b64encode(b).decode()
pt = struct.pack('<BI2d', 1, 1, 1.5, -2.5)
rows = [
    {"id": 1, "g": b64(pt), "gg": b64(pt)},                       # good
    {"id": 2, "g": b64(b'hello, world')},                         # text (byte order 'h')
    {"id": 3, "g": b64(pt[:-3])},                                 # truncated point
    {"id": 4, "g": b64(pt + b'\0')},                              # trailing byte
    {"id": 5, "gg": b64(struct.pack('<BI2d', 1, 99, 0, 0))},      # unknown type code
    {"id": 6, "g": ""},                                           # no bytes
    {"id": 7, "g": None, "gg": b64(struct.pack('>BI2d', 0, 1, 3, 4))},  # good, big-endian
]
with open(d + '/in.ndjson', 'w') as f:
    for r in rows:
        f.write(json.dumps(r, separators=(',', ':')) + '\n')
with open(d + '/want.ndjson', 'w') as f:
    f.write('{"id":1,"g":"%s","gg":"%s"}\n' % (pt.hex(), pt.hex()))
    f.write('{"id":7,"g":null,"gg":"%s"}\n' % struct.pack('>BI2d', 0, 1, 3, 4).hex())
PY

check_quarantine() { # quarantine file, what ran
  local what=$2 q=$tmp/q.$2
  cat "$1" > "$q" 2> /dev/null || true
  [ "$(wc -l < "$q")" = 5 ] || fail "$what: 5 lines quarantined expected: $(cat "$q")"
  for l in 2 3 4 6; do
    grep "\"line\":$l," "$q" | grep -q "field 'g': geometry value is not WKB" ||
      fail "$what: line $l not quarantined for its geometry: $(cat "$q")"
  done
  grep '"line":5,' "$q" | grep -q "field 'gg': geography value is not WKB" ||
    fail "$what: line 5 not quarantined for its geography: $(cat "$q")"
  grep '"line":3,' "$q" | grep -q "point count past the end of the value" || fail "$what: line 3 says not why: $(cat "$q")"
  grep '"line":4,' "$q" | grep -q "bytes after the geometry" ||
    fail "$what: line 4 says not why: $(cat "$q")"
}

# ---- 1. convert --------------------------------------------------------------------------
"$floe" convert --schema "$tmp/s.json" "$tmp/in.ndjson" -o "$tmp/out" > /dev/null 2> "$tmp/err" ||
  die "convert: $(cat "$tmp/err")"
check_quarantine "$tmp/out/_quarantine/quarantine.ndjson" convert
"$floe" cat "$tmp"/out/*.parquet | sort | diff "$tmp/want.ndjson" - || fail "convert wrote other rows"
"$floe" convert --strict --schema "$tmp/s.json" "$tmp/in.ndjson" -o "$tmp/strict" \
  > /dev/null 2> "$tmp/err" && fail "convert --strict took a value that is not WKB"
grep -q 'line 2' "$tmp/err" && grep -q "field 'g': geometry value is not WKB" "$tmp/err" ||
  fail "convert --strict: $(cat "$tmp/err")"
[ -z "$(find "$tmp/strict" -name '*.parquet' 2>/dev/null)" ] || fail "convert --strict left a file"
echo "geo_wkb_ingest: convert ok"

# ---- 2. append ---------------------------------------------------------------------------
"$floe" namespace create ns > /dev/null
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 > /dev/null
"$floe" append ns.t "$tmp/in.ndjson" > /dev/null 2> "$tmp/err" || die "append: $(cat "$tmp/err")"
find "$tmp/wh" -path '*quarantine*' -name '*.ndjson' -exec cat {} + > "$tmp/q.ndjson"
check_quarantine "$tmp/q.ndjson" append
"$floe" scan ns.t | sort | diff "$tmp/want.ndjson" - || fail "append: the table holds other rows"
echo "geo_wkb_ingest: append ok"

# ---- 3. serve ----------------------------------------------------------------------------
if ! command -v curl > /dev/null; then
  echo "geo_wkb_ingest: no curl, serve not run"
  [ "$fails" = 0 ] || die "$fails checks failed"
  exit 0
fi
"$floe" table create ns.s --schema "$tmp/s.json" --property format-version=3 > /dev/null
"$floe" serve --warehouse "$tmp/wh" --listen 127.0.0.1:0 --port-file "$tmp/port" \
  2> "$tmp/server.log" &
pid=$!
trap 'kill -9 "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 400); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || die "serve did not start: $(cat "$tmp/server.log")"
port=$(cat "$tmp/port")
curl -s -XPOST "http://127.0.0.1:$port/v1/tables/ns.s/events" \
  -H 'Content-Type: application/x-ndjson' --data-binary "@$tmp/in.ndjson" > "$tmp/answer"
grep -q '"accepted":2,"rejected":5' "$tmp/answer" || fail "serve: $(cat "$tmp/answer")"
grep -q "field 'g': geometry value is not WKB" "$tmp/answer" &&
  grep -q "field 'gg': geography value is not WKB" "$tmp/answer" ||
  fail "serve: the answer does not say why: $(cat "$tmp/answer")"
curl -s -XPOST "http://127.0.0.1:$port/v1/admin/flush?wait=true&timeout=120" > "$tmp/flush"
grep -q '"complete":true' "$tmp/flush" || die "serve flush: $(cat "$tmp/flush")"
kill -TERM "$pid"
wait "$pid" || fail "serve exit status $?"
"$floe" scan ns.s | sort | diff "$tmp/want.ndjson" - || fail "serve: the table holds other rows"
echo "geo_wkb_ingest: serve ok"
[ "$fails" = 0 ] || die "$fails checks failed"
echo "geo_wkb_ingest: ok"
