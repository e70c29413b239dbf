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
#     table's files and drop without it keeps them; metrics reports are taken (204);
#  5. transactions/commit: two tables move together (204), and a failed requirement or a
#     refused update on either table leaves both as they were (409 / 400); a missing
#     table 404, a change without identifier 400;
#  6. Idempotency-Key: advertised in /v1/config; a retried create, commit, transaction
#     and drop answer as the first time without running again; a key reused for another
#     request, or not a UUID, is a 400; a table's create, rename and drop record their
#     answer in the change's own transaction (the row holds the new metadata location)
#     and a retry is answered from it;
#  7. bearer tokens (--tokens, floe serve's [token] sections) on a second server over the
#     same catalog: 401 without or with an unknown token, 403 outside the grants (tables,
#     namespaces, a transaction touching a table not granted), 200/204 within them; a
#     namespace listing shows only what the token's grants reach.
#
# Every request goes through tests/js/openapi_proxy.mjs, which checks each request and
# response against the spec's OpenAPI document (tests/data/rest/, pinned with its commit);
# the run fails on any exchange the document does not allow (the log is checked at the end).
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null || { echo "rest_server: node missing, skipped"; exit 77; }
command -v curl >/dev/null || { echo "rest_server: curl missing, skipped"; exit 77; }
for m in iceberg-js ajv ajv-formats yaml; do
  [ -f "$js/node_modules/$m/package.json" ] ||
    { echo "rest_server: $m not installed (scripts/setup --test), skipped"; exit 77; }
done

tmp=$(mktemp -d)
pid= pid2= proxies=()
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "$pid2" ] && kill "$pid2" 2>/dev/null && wait "$pid2" 2>/dev/null
  for p in "${proxies[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
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

# a non-loopback address is refused without tokens
if "$floe" catalog serve --listen 0.0.0.0:0 2>"$tmp/err"; then fail "listened on 0.0.0.0"; fi
grep -q "loopback" "$tmp/err" || fail "non-loopback refusal: $(cat "$tmp/err")"

"$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the server did not start"
# the OpenAPI-checking proxy in front of a server: proxy SERVER_URL PORT_FILE
proxy() {
  node "$js/openapi_proxy.mjs" "$src/tests/data/rest/rest-catalog-open-api.yaml" "$1" "$2" \
    "$tmp/openapi.log" rest 2>>"$tmp/proxy.err" &
  proxies+=($!)
  for _ in $(seq 600); do [ -s "$2" ] && break; sleep 0.1; done
  [ -s "$2" ] || fail "the OpenAPI proxy did not start: $(cat "$tmp/proxy.err")"
}
proxy "http://127.0.0.1:$(cat "$tmp/port")" "$tmp/pport"
base=http://127.0.0.1:$(cat "$tmp/pport")
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
grep -q '"POST /v1/{prefix}/transactions/commit"' "$tmp/body" || fail "config endpoints"
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
"$floe" table list db | grep -qx db.events || fail "db.events not in the SQL catalog"
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
etag=$(curl -H 'Content-Type: application/json' -s -D - -o /dev/null "$base/v1/namespaces/db/tables/events" | tr -d '\r' |
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

# ---------------------------------------------------------------------------------------
# 5. transactions/commit
# ---------------------------------------------------------------------------------------
expect 200 "" POST /v1/namespaces '{"namespace":["tx"]}'
for t in ta tb; do
  expect 200 "" POST /v1/rest/namespaces/tx/tables "{\"name\":\"$t\",\"schema\":$(cat "$tmp/schema.json")}"
  "$floe" append "tx.$t" "$tmp/ev.ndjson" >/dev/null
done
# table state: metadata-location, main's snapshot, property p
state() {
  curl -s "$base/v1/namespaces/tx/tables/$1" | python3 -c '
import json, sys
d = json.load(sys.stdin); m = d["metadata"]
print(d["metadata-location"], m["refs"]["main"]["snapshot-id"], m.get("properties", {}).get("p"), m["table-uuid"])'
}
read -r loc_a snap_a _ uuid_a <<< "$(state ta)"
read -r loc_b snap_b _ uuid_b <<< "$(state tb)"
change() { # change TABLE UUID SNAPSHOT VALUE
  printf '{"identifier":{"namespace":["tx"],"name":"%s"},"requirements":[{"type":"assert-table-uuid","uuid":"%s"},{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":%s}],"updates":[{"action":"set-properties","updates":{"p":"%s"}}]}' "$@"
}
# a failed requirement on the second table: 409, neither moves
expect 409 CommitFailedException POST /v1/rest/transactions/commit \
  "{\"table-changes\":[$(change ta "$uuid_a" "$snap_a" 1),$(change tb "$uuid_b" 12345 1)]}"
grep -q 'tx.tb' "$tmp/body" || fail "the 409 does not name the table: $(cat "$tmp/body")"
[ "$(state ta)" = "$loc_a $snap_a None $uuid_a" ] || fail "ta moved on a failed transaction: $(state ta)"
[ "$(state tb)" = "$loc_b $snap_b None $uuid_b" ] || fail "tb moved on a failed transaction: $(state tb)"
# an update refused on the first table: 400, neither moves
expect 400 BadRequestException POST /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"tx\"],\"name\":\"ta\"},\"requirements\":[],\"updates\":[{\"action\":\"set-current-schema\",\"schema-id\":77}]},$(change tb "$uuid_b" "$snap_b" 1)]}"
[ "$(state tb)" = "$loc_b $snap_b None $uuid_b" ] || fail "tb moved on a refused transaction"
expect 400 BadRequestException POST /v1/transactions/commit '{"table-changes":[{"requirements":[],"updates":[]}]}'
expect 400 BadRequestException POST /v1/transactions/commit '{"table-changes":[]}'
expect 400 BadRequestException POST /v1/transactions/commit \
  "{\"table-changes\":[$(change ta "$uuid_a" "$snap_a" 1),$(change ta "$uuid_a" "$snap_a" 2)]}"
expect 404 NoSuchTableException POST /v1/transactions/commit \
  "{\"table-changes\":[$(change ta "$uuid_a" "$snap_a" 1),$(change nope "$uuid_b" "$snap_b" 1)]}"
[ "$(state ta)" = "$loc_a $snap_a None $uuid_a" ] || fail "ta moved on a transaction with a missing table"
# both hold: 204 and both move
expect 204 "" POST /v1/rest/transactions/commit \
  "{\"table-changes\":[$(change ta "$uuid_a" "$snap_a" 1),$(change tb "$uuid_b" "$snap_b" 1)]}"
read -r nloc_a nsnap_a p_a _ <<< "$(state ta)"
read -r nloc_b nsnap_b p_b _ <<< "$(state tb)"
[ "$nloc_a" != "$loc_a" ] && [ "$nloc_b" != "$loc_b" ] && [ "$p_a.$p_b" = 1.1 ] ||
  fail "the transaction did not move both tables: $(state ta) / $(state tb)"
[ "$("$floe" scan tx.tb --format canonical | wc -l)" = 700 ] || fail "floe scan after the transaction"

# ---------------------------------------------------------------------------------------
# 6. Idempotency-Key
# ---------------------------------------------------------------------------------------
expect 200 "" GET /v1/config
[ "$(jget '["idempotency-key-lifetime"]' < "$tmp/body")" = PT30M ] || fail "no idempotency-key-lifetime"
ikey() { printf '0190f7a1-0000-7000-8000-%012d' "$1"; }
# code with a key: icode KEY METHOD PATH [BODY]
icode() {
  local k=$1
  shift
  if [ $# -ge 3 ]; then
    curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -X "$1" "$base$2" -H "Idempotency-Key: $k" -d "$3"
  else
    curl -s -o "$tmp/body" -w '%{http_code}' -X "$1" "$base$2" -H "Idempotency-Key: $k"
  fi
}
[ "$(icode "$(ikey 1)" POST /v1/namespaces '{"namespace":["idem"]}')" = 200 ] || fail "idem create: $(cat "$tmp/body")"
cp "$tmp/body" "$tmp/first"
[ "$(icode "$(ikey 1)" POST /v1/namespaces '{"namespace":["idem"]}')" = 200 ] ||
  fail "a retried create ran again: $(cat "$tmp/body")"
cmp -s "$tmp/body" "$tmp/first" || fail "the retried create answered otherwise"
[ "$(icode "$(ikey 2)" POST /v1/namespaces '{"namespace":["idem"]}')" = 409 ] || fail "a new key did not run"
[ "$(icode "$(ikey 2)" POST /v1/namespaces '{"namespace":["idem"]}')" = 409 ] || fail "a recorded 409 was not replayed"
[ "$(icode "$(ikey 1)" POST /v1/namespaces '{"namespace":["other"]}')" = 400 ] || fail "a reused key was not refused"
[ "$(icode not-a-uuid POST /v1/namespaces '{"namespace":["other"]}')" = 400 ] || fail "a bad key was not refused"
expect 404 "" HEAD /v1/namespaces/other
# a commit retried: one commit
read -r loc_a snap_a _ uuid_a <<< "$(state ta)"
body="{\"requirements\":[{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":$snap_a}],\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"p\":\"2\"}}]}"
[ "$(icode "$(ikey 3)" POST /v1/namespaces/tx/tables/ta "$body")" = 200 ] || fail "idem commit: $(cat "$tmp/body")"
read -r loc_a2 _ p _ <<< "$(state ta)"
[ "$loc_a2" != "$loc_a" ] && [ "$p" = 2 ] || fail "the keyed commit did not commit"
[ "$(icode "$(ikey 3)" POST /v1/namespaces/tx/tables/ta "$body")" = 200 ] || fail "retried commit: $(cat "$tmp/body")"
[ "$(jget '["metadata-location"]' < "$tmp/body")" = "$loc_a2" ] || fail "retried commit answered another state"
[ "$(state ta | cut -d' ' -f1)" = "$loc_a2" ] || fail "the retried commit committed again"
[ "$(icode "$(ikey 3)" POST /v1/namespaces/tx/tables/ta '{"requirements":[],"updates":[]}')" = 400 ] ||
  fail "a key reused for another commit was not refused"
# a transaction retried: one transaction
read -r loc_b _ _ uuid_b <<< "$(state tb)"
tx="{\"table-changes\":[$(change ta "$uuid_a" "$snap_a" 3),$(change tb "$uuid_b" "$snap_b" 3)]}"
[ "$(icode "$(ikey 4)" POST /v1/transactions/commit "$tx")" = 204 ] || fail "idem transaction: $(cat "$tmp/body")"
s1="$(state ta) $(state tb)"
[ "$(icode "$(ikey 4)" POST /v1/transactions/commit "$tx")" = 204 ] || fail "retried transaction: $(cat "$tmp/body")"
[ "$(state ta) $(state tb)" = "$s1" ] || fail "the retried transaction committed again"
# a drop retried: 204 again, not 404
[ "$(icode "$(ikey 5)" DELETE /v1/namespaces/idem)" = 204 ] || fail "idem drop"
[ "$(icode "$(ikey 5)" DELETE /v1/namespaces/idem)" = 204 ] || fail "retried drop: $(cat "$tmp/body")"
[ "$(icode "$(ikey 6)" DELETE /v1/namespaces/idem)" = 404 ] || fail "a new key on the drop did not run"
# a table's create, rename and drop: each answer recorded in the transaction of the change
# itself (the row holds the status and the new metadata location, no body), and replayed
idrow() {
  sqlite3 -cmd ".timeout 10000" "$tmp/catalog.db" "SELECT status || '|' || COALESCE(metadata_location, '') \
    || '|' || (body IS NULL) FROM floe_rest_idempotency WHERE idempotency_key = '$1'"
}
tbl='{"name":"t1","schema":{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}}'
expect 200 "" POST /v1/namespaces '{"namespace":["idt"]}'
[ "$(icode "$(ikey 7)" POST /v1/namespaces/idt/tables "$tbl")" = 200 ] || fail "idem table create: $(cat "$tmp/body")"
loc_t=$(jget '["metadata-location"]' < "$tmp/body")
if command -v sqlite3 >/dev/null; then
  [ "$(idrow "$(ikey 7)")" = "200|$loc_t|1" ] || fail "create: not recorded with the change: $(idrow "$(ikey 7)")"
fi
[ "$(icode "$(ikey 7)" POST /v1/namespaces/idt/tables "$tbl")" = 200 ] || fail "retried table create: $(cat "$tmp/body")"
[ "$(jget '["metadata-location"]' < "$tmp/body")" = "$loc_t" ] || fail "the retried create answered another table"
ren='{"source":{"namespace":["idt"],"name":"t1"},"destination":{"namespace":["idt"],"name":"t2"}}'
[ "$(icode "$(ikey 8)" POST /v1/tables/rename "$ren")" = 204 ] || fail "idem rename: $(cat "$tmp/body")"
[ "$(icode "$(ikey 8)" POST /v1/tables/rename "$ren")" = 204 ] || fail "retried rename: $(cat "$tmp/body")"
[ "$(icode "$(ikey 9)" DELETE /v1/namespaces/idt/tables/t2)" = 204 ] || fail "idem table drop: $(cat "$tmp/body")"
[ "$(icode "$(ikey 9)" DELETE /v1/namespaces/idt/tables/t2)" = 204 ] || fail "retried table drop: $(cat "$tmp/body")"
if command -v sqlite3 >/dev/null; then
  [ "$(idrow "$(ikey 8)")" = "204||1" ] || fail "rename: not recorded with the change: $(idrow "$(ikey 8)")"
  [ "$(idrow "$(ikey 9)")" = "204||1" ] || fail "drop: not recorded with the change: $(idrow "$(ikey 9)")"
fi
expect 404 "" HEAD /v1/namespaces/idt/tables/t2

# ---------------------------------------------------------------------------------------
# 7. bearer tokens, on a second server over the same catalog
# ---------------------------------------------------------------------------------------
cat > "$tmp/tokens.conf" <<'CONF'
[token ops]
secret = secret-ops-0001
grants = *
[token ta-only]
secret = secret-ta-00001
grants = tx.ta
[token tx-ns]
secret = secret-txns-001
grants = tx.*
CONF
chmod 600 "$tmp/tokens.conf"  # it holds secrets: catalog serve refuses one others may read
"$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port2" --tokens "$tmp/tokens.conf" \
  2>"$tmp/server2.log" &
pid2=$!
for _ in $(seq 100); do [ -s "$tmp/port2" ] && break; sleep 0.1; done
[ -s "$tmp/port2" ] || fail "the server with tokens did not start: $(cat "$tmp/server2.log")"
proxy "http://127.0.0.1:$(cat "$tmp/port2")" "$tmp/pport2"
base2=http://127.0.0.1:$(cat "$tmp/pport2")
acode() { # acode TOKEN METHOD PATH [BODY]
  local auth=()
  [ -n "$1" ] && auth=(-H "Authorization: Bearer $1")
  if [ $# -ge 4 ]; then
    curl -H 'Content-Type: application/json' -s -D "$tmp/headers" -o "$tmp/body" -w '%{http_code}' "${auth[@]}" -X "$2" "$base2$3" -d "$4"
  else
    curl -s -D "$tmp/headers" -o "$tmp/body" -w '%{http_code}' "${auth[@]}" -X "$2" "$base2$3"
  fi
}
aexpect() { # aexpect STATUS TOKEN METHOD PATH [BODY]
  local want=$1 got
  shift
  got=$(acode "$@")
  [ "$got" = "$want" ] || fail "token ${1:-none}: $2 $3 -> $got, expected $want: $(cat "$tmp/body")"
  case $want in
    401) [ "$(jget '["error"]["type"]' < "$tmp/body")" = NotAuthorizedException ] || fail "401 body: $(cat "$tmp/body")"
         grep -qi '^WWW-Authenticate: Bearer' "$tmp/headers" || fail "401 without WWW-Authenticate" ;;
    403) [ "$(jget '["error"]["type"]' < "$tmp/body")" = ForbiddenException ] || fail "403 body: $(cat "$tmp/body")"
         [ "$(jget '["error"]["code"]' < "$tmp/body")" = 403 ] || fail "403 body: $(cat "$tmp/body")" ;;
  esac
}
aexpect 401 "" GET /v1/config
aexpect 401 wrong-secret-000 GET /v1/config
aexpect 200 secret-ta-00001 GET /v1/config
aexpect 200 secret-ta-00001 GET /v1/namespaces/tx/tables/ta
aexpect 403 secret-ta-00001 GET /v1/namespaces/tx/tables/tb
aexpect 403 secret-ta-00001 GET /v1/namespaces/tx/tables
# a namespace listing is filtered by the grants: a table grant shows its namespace
aexpect 200 secret-ta-00001 GET /v1/namespaces
[ "$(jget '["namespaces"]' < "$tmp/body")" = "[['tx']]" ] || fail "tx.ta's listing: $(cat "$tmp/body")"
aexpect 403 secret-ta-00001 GET "/v1/namespaces?parent=db"
aexpect 403 secret-ta-00001 POST /v1/namespaces '{"namespace":["ta_ns"]}'
read -r loc_a snap_a _ uuid_a <<< "$(state ta)"
read -r loc_b snap_b _ uuid_b <<< "$(state tb)"
aexpect 403 secret-ta-00001 POST /v1/transactions/commit \
  "{\"table-changes\":[$(change ta "$uuid_a" "$snap_a" 4),$(change tb "$uuid_b" "$snap_b" 4)]}"
[ "$(state tb)" = "$loc_b $snap_b 3 $uuid_b" ] || fail "a forbidden transaction moved tb"
aexpect 204 secret-ta-00001 POST /v1/transactions/commit "{\"table-changes\":[$(change ta "$uuid_a" "$snap_a" 4)]}"
aexpect 200 secret-txns-001 GET /v1/namespaces/tx/tables
aexpect 200 secret-txns-001 GET /v1/namespaces/tx/tables/tb
aexpect 200 secret-txns-001 GET /v1/namespaces
[ "$(jget '["namespaces"]' < "$tmp/body")" = "[['tx']]" ] || fail "tx.*'s listing: $(cat "$tmp/body")"
aexpect 403 secret-txns-001 POST /v1/tables/rename \
  '{"source":{"namespace":["tx"],"name":"tb"},"destination":{"namespace":["db"],"name":"tb"}}'
aexpect 200 secret-ops-0001 GET /v1/namespaces
[ "$(jget '["namespaces"]' < "$tmp/body")" = "$(curl -s "$base/v1/namespaces" | jget '["namespaces"]')" ] ||
  fail "*'s listing: $(cat "$tmp/body")"
aexpect 200 secret-ops-0001 GET /v1/namespaces/tx/tables/tb
kill "$pid2"
wait "$pid2" || fail "the server with tokens did not stop cleanly"
pid2=

kill "$pid"
wait "$pid" || fail "the server did not stop cleanly"
pid=
grep -q "stopping" "$tmp/server.log" || fail "no stop message"

# every exchange as the OpenAPI document allows
python3 - "$tmp/openapi.log" <<'EOF' || fail "exchanges the OpenAPI document does not allow"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
bad = [l for l in lines if l.get("problems")]
for l in bad[:20]:
    print(f'  {l["method"]} {l["path"]} -> {l.get("status")}: {"; ".join(l["problems"])}', file=sys.stderr)
ops = {l.get("operation") for l in lines if l.get("operation")}
print(f"rest_server: {len(lines)} exchanges checked against the OpenAPI document, "
      f"{len(ops)} operations, {sum(1 for l in lines if l.get('refused_request'))} requests "
      f"the document refuses (all refused by the server), {len(bad)} violations")
sys.exit(1 if bad or len(lines) < 100 else 0)
EOF
echo "rest_server: ok"
