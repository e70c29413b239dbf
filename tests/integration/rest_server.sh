#!/usr/bin/env bash
# rest_server.sh - `floe catalog serve`, the Iceberg REST catalog over a SQLite catalog,
# driven by iceberg-js (tests/js/rest_client.mjs, an independent client) and by curl.
#
#  1. routes and errors by curl: /v1/config (prefix, endpoints), paths with and without
#     the prefix, 404 for no route, 405 for a route without the method, 400 for a body
#     that is not JSON, multi-level namespaces in the path (%1F) and in ?parent=;
#  2. iceberg-js: namespaces (create, list with parent and pages, exists, load, update
#     properties, drop of a non-empty one refused);
#  3. tables: created through REST, appended to by `floe append` on the SQL catalog and
#     seen through REST (current snapshot, summary); list, load with ETag / 304, rename,
#     register, drop; a staged create committed with assert-create;
#  4. commits: two clients racing on assert-ref-snapshot-id (one wins, one 409), every
#     requirement kind failing and holding, the updates applied; `floe scan` reads the
#     table REST committed to; ETag 304 by curl; drop with purgeRequested deletes the
#     table's files and drop without it keeps them; metrics reports are taken (204).
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null || { echo "rest_server: node missing, skipped"; exit 77; }
command -v curl >/dev/null || { echo "rest_server: curl missing, skipped"; exit 77; }
[ -f "$js/node_modules/iceberg-js/package.json" ] ||
  { echo "rest_server: iceberg-js not installed (scripts/setup --test), skipped"; exit 77; }

tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "rest_server: FAIL: $*" >&2
  [ -f "$tmp/server.log" ] && sed 's/^/  server: /' "$tmp/server.log" >&2
  exit 1
}
jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=rest
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true

# a non-loopback address is refused (no authentication yet)
if "$floe" catalog serve --listen 0.0.0.0:0 2>"$tmp/err"; then fail "listened on 0.0.0.0"; fi
grep -q "loopback" "$tmp/err" || fail "non-loopback refusal: $(cat "$tmp/err")"

"$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the server did not start"
port=$(cat "$tmp/port")
base=http://127.0.0.1:$port
# status of a request: code METHOD PATH [BODY]
code() {
  if [ "$1" = HEAD ]; then
    curl -s -I -o "$tmp/body" -w '%{http_code}' "$base$2"
  elif [ $# -ge 3 ]; then
    curl -s -o "$tmp/body" -w '%{http_code}' -X "$1" "$base$2" -H 'Content-Type: application/json' -d "$3"
  else
    curl -s -o "$tmp/body" -w '%{http_code}' -X "$1" "$base$2"
  fi
}
expect() { # expect STATUS [ERROR-TYPE] -- METHOD PATH [BODY]
  local want=$1 type=$2
  shift 2
  local got
  got=$(code "$@")
  [ "$got" = "$want" ] || fail "$* -> $got, expected $want: $(cat "$tmp/body")"
  if [ -n "$type" ]; then
    [ "$(jget '["error"]["type"]' < "$tmp/body")" = "$type" ] || fail "$* -> $(cat "$tmp/body")"
    [ "$(jget '["error"]["code"]' < "$tmp/body")" = "$want" ] || fail "$* -> $(cat "$tmp/body")"
  fi
}

# ---------------------------------------------------------------------------------------
# 1. routes and errors
# ---------------------------------------------------------------------------------------
expect 200 "" GET /v1/config
[ "$(jget '["overrides"]["prefix"]' < "$tmp/body")" = rest ] || fail "config: $(cat "$tmp/body")"
grep -q '"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"' "$tmp/body" || fail "config endpoints"
grep -q '"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"' "$tmp/body" || fail "config endpoints"
if grep -q 'transactions' "$tmp/body"; then fail "config advertises transactions/commit"; fi
expect 200 "" GET "/v1/config?warehouse=rest"
expect 404 NoSuchWarehouseException GET "/v1/config?warehouse=elsewhere"
expect 404 NotFoundException GET /v1/rest/nothing/here
expect 404 NotFoundException GET /v2/config
expect 404 NoSuchWarehouseException GET /v1/otherprefix/namespaces
expect 405 MethodNotAllowedException PUT /v1/namespaces
expect 400 BadRequestException POST /v1/namespaces '{not json'
expect 400 BadRequestException POST /v1/namespaces '{"namespace":["a.b"]}'
expect 400 BadRequestException POST /v1/namespaces '{"namespace":"a"}'
expect 200 "" POST /v1/rest/namespaces '{"namespace":["multi"]}'
expect 200 "" POST /v1/namespaces '{"namespace":["multi","level"],"properties":{"k":"v"}}'
expect 200 "" GET "/v1/rest/namespaces/multi%1Flevel"
[ "$(jget '["namespace"]' < "$tmp/body")" = "['multi', 'level']" ] || fail "load: $(cat "$tmp/body")"
[ "$(jget '["properties"]["k"]' < "$tmp/body")" = v ] || fail "load: $(cat "$tmp/body")"
expect 200 "" GET "/v1/namespaces?parent=multi"
[ "$(jget '["namespaces"]' < "$tmp/body")" = "[['multi', 'level']]" ] || fail "parent: $(cat "$tmp/body")"
expect 204 "" HEAD "/v1/namespaces/multi%1Flevel"
expect 404 "" HEAD "/v1/namespaces/multi%1Fnope"
expect 400 BadRequestException GET "/v1/namespaces?pageSize=0"
expect 204 "" DELETE "/v1/namespaces/multi%1Flevel"
expect 204 "" DELETE /v1/namespaces/multi

# ---------------------------------------------------------------------------------------
# 2. namespaces through iceberg-js
# ---------------------------------------------------------------------------------------
node "$js/rest_client.mjs" "$base" namespaces || fail "iceberg-js namespaces"

# ---------------------------------------------------------------------------------------
# 3. tables: created through REST, appended to by floe, seen through REST
# ---------------------------------------------------------------------------------------
"$floe" gen --schema-out "$tmp/schema.json"
node "$js/rest_client.mjs" "$base" create "$tmp/schema.json" || fail "iceberg-js create"
"$floe" catalog tables db | grep -qx events || fail "db.events not in the SQL catalog"
"$floe" gen --seed 5 --count 700 -o "$tmp/ev.ndjson" >/dev/null
"$floe" append db.events "$tmp/ev.ndjson" --json > "$tmp/append.json"
snap=$(jget '["snapshot_id"]' < "$tmp/append.json")
expect 200 "" GET /v1/namespaces/db/tables/events
[ "$(jget '["metadata"]["current-snapshot-id"]' < "$tmp/body")" = "$snap" ] ||
  fail "floe append not seen through REST: $(head -c 400 "$tmp/body")"
python3 - "$tmp/body" "$snap" <<'EOF' || fail "the appended snapshot through REST"
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["metadata"]["snapshots"] if s["snapshot-id"] == int(sys.argv[2])][0]
assert s["summary"]["added-records"] == "700", s["summary"]
EOF
[ "$("$floe" scan db.events --format canonical | wc -l)" = 700 ] || fail "floe scan of the REST-created table"

node "$js/rest_client.mjs" "$base" tables || fail "iceberg-js tables"

# ETag and If-None-Match by curl; snapshots=refs has its own tag
etag=$(curl -s -D - -o /dev/null "$base/v1/namespaces/db/tables/events" | tr -d '\r' |
  sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
[ -n "$etag" ] || fail "no ETag"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$base/v1/namespaces/db/tables/events")" = 304 ] ||
  fail "If-None-Match did not give 304"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: "other"' "$base/v1/namespaces/db/tables/events")" = 200 ] ||
  fail "another ETag did not give 200"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$base/v1/namespaces/db/tables/events?snapshots=refs")" = 200 ] ||
  fail "snapshots=refs shares the ETag of snapshots=all"
expect 400 BadRequestException GET "/v1/namespaces/db/tables/events?snapshots=some"

# ---------------------------------------------------------------------------------------
# 4. commits
# ---------------------------------------------------------------------------------------
node "$js/rest_client.mjs" "$base" commit || fail "iceberg-js commit"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$base/v1/namespaces/db/tables/events")" = 200 ] ||
  fail "the ETag did not change with the commits"
# floe reads what REST committed: main is a snapshot over the appended manifests
[ "$("$floe" scan db.events --format canonical | wc -l)" = 700 ] || fail "floe scan after the REST commits"
"$floe" append db.events "$tmp/ev.ndjson" >/dev/null
[ "$("$floe" scan db.events --format canonical | wc -l)" = 1400 ] || fail "floe append after the REST commits"
expect 200 "" GET /v1/namespaces/db/tables/events
python3 - "$tmp/body" <<'EOF' || fail "the snapshot chain through REST"
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
cur = [s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"]][0]
assert cur["parent-snapshot-id"] in (2001, 2002), cur
assert m["refs"]["main"]["snapshot-id"] == m["current-snapshot-id"]
EOF

# metrics reports are accepted (and logged)
expect 204 "" POST /v1/namespaces/db/tables/events/metrics \
  '{"report-type":"commit-report","table-name":"rest.db.events","snapshot-id":1001,"sequence-number":2,"operation":"append","metrics":{}}'
expect 404 NoSuchTableException POST /v1/rest/namespaces/db/tables/nope/metrics \
  '{"report-type":"scan-report","table-name":"rest.db.nope","snapshot-id":1,"metrics":{}}'
expect 400 BadRequestException POST /v1/namespaces/db/tables/events/metrics '{"report-type":"other"}'

# drop: without purge the files stay, with purgeRequested=true they go
loc=$(curl -s "$base/v1/namespaces/db/tables/registered" | jget '["metadata"]["location"]')
dir=${loc#file://}
[ -d "$dir/metadata" ] || fail "no metadata folder at $dir"
expect 400 BadRequestException DELETE "/v1/namespaces/db/tables/registered?purgeRequested=maybe"
expect 204 "" DELETE "/v1/namespaces/db/tables/registered"
[ -n "$(ls "$dir/metadata")" ] || fail "drop without purge deleted files"
evloc=$(curl -s "$base/v1/namespaces/db/tables/events" | jget '["metadata"]["location"]')
evdir=${evloc#file://}
[ -n "$(find "$evdir" -name '*.parquet')" ] || fail "no data files under $evdir"
expect 204 "" DELETE "/v1/namespaces/db/tables/events?purgeRequested=true"
[ -z "$(find "$evdir" -type f)" ] || fail "purge left files: $(find "$evdir" -type f | head -3)"
expect 404 NoSuchTableException GET /v1/namespaces/db/tables/events
expect 204 "" DELETE /v1/namespaces/db

kill "$pid"
wait "$pid" || fail "the server did not stop cleanly"
pid=
grep -q "stopping" "$tmp/server.log" || fail "no stop message"
echo "rest_server: ok"
