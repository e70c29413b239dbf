#!/usr/bin/env bash
# rest_guard.sh - `floe catalog serve` keeps one table's commits from reaching another
# table's files (adversary findings on issue 21):
#  - set-location in a commit is held to the rule of create and register: a location
#    inside another table's, around it, or relative is a 400 and nothing changes; so a
#    table moved onto another's folder can no longer purge that table's files on drop
#    (it did: `DELETE ...?purgeRequested=true` deleted the other table's manifests);
#  - the same in a transaction's change;
#  - a set-location to a folder of its own (inside its namespace's) still commits;
#  - Idempotency-Key: a key sent again in upper case is the same key (RFC 9562), and a key
#    reused with another query (purgeRequested=true after =false) is a 400, not a replay;
#  - a Content-Length over the body limit is a 413 before the body is read (the server
#    waited for all 10 GB of one); If-None-Match takes W/"etag" and lists;
#  - with --tokens, a malformed body is the handler's 400 for a token that may do
#    everything (it was a 403 "no grant").
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v curl >/dev/null || { echo "rest_guard: curl missing, skipped"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "rest_guard: FAIL: $*" >&2; fails=$((fails + 1)); }
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_TEST_REST_FAULT || true
export FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=$tmp/wh
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98

echo '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}' > "$tmp/s.json"
seq 1 50 | sed 's/.*/{"id":&}/' > "$tmp/in.ndjson"
"$floe" namespace create secret >/dev/null
"$floe" namespace create shop >/dev/null
"$floe" table create secret.t --schema "$tmp/s.json" >/dev/null
"$floe" append secret.t "$tmp/in.ndjson" >/dev/null
"$floe" table create shop.atk --schema "$tmp/s.json" >/dev/null
"$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "rest_guard: FAIL: the server did not start: $(cat "$tmp/server.log")"; exit 1; }
base=http://127.0.0.1:$(cat "$tmp/port")
secret_loc=$(curl -s "$base/v1/namespaces/secret/tables/t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["location"])')
atk_meta() { curl -s "$base/v1/namespaces/shop/tables/atk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata-location"])'; }
before=$(atk_meta)

# expect400 WHAT PATH BODY TEXT: a 400 BadRequestException whose message holds TEXT
expect400() {
  local code
  code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -X POST "$base$2" -d "$3")
  [ "$code" = 400 ] || { fail "$1: $code, not 400: $(cat "$tmp/body")"; return; }
  grep -q BadRequestException "$tmp/body" || fail "$1: $(cat "$tmp/body")"
  grep -qF -- "$4" "$tmp/body" || fail "$1: the message does not say '$4': $(cat "$tmp/body")"
}
setloc() { echo "{\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$1\"}]}"; }
expect400 "set-location onto another table" /v1/namespaces/shop/tables/atk "$(setloc "$secret_loc")" \
  "lies inside the location of table secret.t"
expect400 "set-location inside another table" /v1/namespaces/shop/tables/atk "$(setloc "$secret_loc/data")" \
  "lies inside the location of table secret.t"
expect400 "set-location around another table" /v1/namespaces/shop/tables/atk "$(setloc "$tmp/wh/secret")" \
  "contains the location of table secret.t"
expect400 "set-location relative" /v1/namespaces/shop/tables/atk "$(setloc "../../etc")" \
  "is not an absolute location"
expect400 "set-location in a transaction" /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"atk\"},\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$secret_loc\"}]}]}" \
  "lies inside the location of table secret.t"
[ "$(atk_meta)" = "$before" ] || fail "a refused set-location changed shop.atk"

# a drop with purge of shop.atk leaves secret.t whole
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -X DELETE "$base/v1/namespaces/shop/tables/atk?purgeRequested=true")
[ "$code" = 204 ] || fail "drop with purge: $code $(cat "$tmp/body")"
n=$("$floe" scan secret.t 2>&1 | wc -l)
[ "$n" = 50 ] || fail "secret.t after the purge of shop.atk: $n rows: $("$floe" scan secret.t 2>&1 | head -2)"

# a location of its own is taken
"$floe" table create shop.mv --schema "$tmp/s.json" >/dev/null
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -X POST "$base/v1/namespaces/shop/tables/mv" -d "$(setloc "$tmp/wh/shop/mv2")")
[ "$code" = 200 ] || fail "set-location to a folder of its own: $code $(cat "$tmp/body")"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["metadata"]["location"].endswith("/shop/mv2")' "$tmp/body" ||
  fail "set-location not applied: $(cat "$tmp/body")"

# Idempotency-Key: case, and the query as part of the request
K=4a3b2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -H "Idempotency-Key: $K" -X POST "$base/v1/namespaces" -d '{"namespace":["idem1"]}')
[ "$code" = 200 ] || fail "keyed create: $code $(cat "$tmp/body")"
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -H "Idempotency-Key: ${K^^}" -X POST "$base/v1/namespaces" -d '{"namespace":["idem1"]}')
[ "$code" = 200 ] || fail "the same key in upper case ran again: $code $(cat "$tmp/body")"
"$floe" table create shop.d1 --schema "$tmp/s.json" >/dev/null
K2=5b4c3d2e-1f0a-4b9c-8d7e-6f5a4b3c2d1e
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -H "Idempotency-Key: $K2" -X DELETE "$base/v1/namespaces/shop/tables/d1?purgeRequested=false")
[ "$code" = 204 ] || fail "keyed drop: $code $(cat "$tmp/body")"
code=$(curl -s -o "$tmp/body" -w '%{http_code}' -H "Idempotency-Key: $K2" -X DELETE "$base/v1/namespaces/shop/tables/d1?purgeRequested=true")
[ "$code" = 400 ] || fail "the key reused with another query: $code, not 400 $(cat "$tmp/body")"

# a declared body over the limit is a 413 at once, not after waiting for (or reading) it
code=$(curl -s -m 5 -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
  -H 'Content-Length: 10000000000' -X POST "$base/v1/namespaces" -d '{}' || true)
[ "$code" = 413 ] || fail "Content-Length 10000000000: $code, not 413 at once $(cat "$tmp/body")"
grep -q 'larger than the limit' "$tmp/body" || fail "413 body: $(cat "$tmp/body")"
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -X POST "$base/v1/namespaces" -d '{"namespace":["after413"]}')
[ "$code" = 200 ] || fail "a request after the 413: $code $(cat "$tmp/body")"

# If-None-Match compares weakly (RFC 9110 13.1.2) and takes a list
etag=$(curl -H 'Content-Type: application/json' -s -D - -o /dev/null "$base/v1/namespaces/secret/tables/t" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
[ -n "$etag" ] || fail "no ETag on a load"
for inm in "$etag" "W/$etag" "\"other\", W/$etag" "\"a\",$etag"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $inm" "$base/v1/namespaces/secret/tables/t")
  [ "$code" = 304 ] || fail "If-None-Match: $inm: $code, not 304"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: W/"other", "x"' "$base/v1/namespaces/secret/tables/t")
[ "$code" = 200 ] || fail "If-None-Match of other etags: $code, not 200"
kill "$pid"; wait "$pid" || fail "the server did not stop cleanly"; pid=

# a token that may do everything gets the handler's 400 for a malformed body
printf '[token ops]\nsecret = secret-ops-0001\ngrants = *\n' > "$tmp/tokens.conf"
rm -f "$tmp/port"
chmod 600 "$tmp/tokens.conf"  # it holds secrets: catalog serve refuses one others may read
"$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" --tokens "$tmp/tokens.conf" 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
base=http://127.0.0.1:$(cat "$tmp/port")
for body in '{"namespace":"shop"}' '{"namespace":[]}' '{"namespace":["a.b"]}'; do
  code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -H 'Authorization: Bearer secret-ops-0001' -X POST "$base/v1/namespaces" -d "$body")
  [ "$code" = 400 ] || fail "create namespace $body with *: $code $(cat "$tmp/body")"
done
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -H 'Authorization: Bearer secret-ops-0001' -X POST "$base/v1/tables/rename" -d '{"source":{"namespace":["shop"]}}')
[ "$code" = 400 ] || fail "rename without names with *: $code $(cat "$tmp/body")"
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -H 'Authorization: Bearer wrong-secret-01' -X POST "$base/v1/namespaces" -d '{"namespace":"shop"}')
[ "$code" = 401 ] || fail "a malformed body with a wrong token: $code, not 401"
kill "$pid"; wait "$pid" || fail "the server did not stop cleanly"; pid=
[ $fails = 0 ] || exit 1
echo "rest_guard: ok"
