#!/usr/bin/env bash
# rest_idem_crash.sh - Idempotency-Key on the namespace routes of `floe catalog serve`
# across a crash: the server ends right after running a keyed request
# (FLOE_TEST_REST_FAULT=crash: before it answers or writes anything else), is started
# again on the same SQLite catalog, and the client's retry with the same key gets the
# answer of the request that ran, which is not run again:
#
#  1. create namespace (with properties): the retry answers 200 with the namespace and
#     its properties (not 409 AlreadyExists); the namespace was created once;
#  2. update properties (an update and a removal): the retry answers what the first run
#     did (the removed key in "removed", not in "missing");
#  3. drop namespace: the retry answers 204 (not 404);
#  4. each recorded answer was written with its change (the row holds the body), and a
#     key reused for another request is still a 400.
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
command -v curl >/dev/null || { echo "rest_idem_crash: curl missing, skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "rest_idem_crash: sqlite3 missing, skipped"; exit 77; }
tmp=$(mktemp -d)
cpid=
stop() { if [ -n "$cpid" ]; then kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null || true; fi; cpid=; }
trap 'stop; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; tail -20 "$tmp/server.log" >&2 || true; exit 1; }
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME || true
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
mkdir -p "$tmp/wh"

# start [FAULT]: floe catalog serve, with FLOE_TEST_REST_FAULT=FAULT when given
start() {
  rm -f "$tmp/port"
  FLOE_TEST_REST_FAULT=${1:-} FLOE_LOG=info "$FLOE" catalog serve --listen 127.0.0.1:0 \
    --port-file "$tmp/port" 2>>"$tmp/server.log" &
  cpid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  [ -s "$tmp/port" ] || fail "floe catalog serve did not start"
  base=http://127.0.0.1:$(cat "$tmp/port")
}
# req METHOD PATH KEY [BODY]: the answer's status in $code, its body in $tmp/out
req() {
  local args=(-s -o "$tmp/out" -w '%{http_code}' -X "$1" "$base$2")
  [ -n "$3" ] && args+=(-H "Idempotency-Key: $3")
  [ $# -ge 4 ] && args+=(-H 'Content-Type: application/json' -d "$4")
  code=$(curl "${args[@]}") || code=none
}
# crash METHOD PATH KEY [BODY]: the request runs and the server ends unanswered
crash() {
  stop
  start crash:1
  req "$@"
  [ "$code" = none ] || [ "$code" = 000 ] || fail "$1 $2: answered $code before the crash"
  local st=0
  wait "$cpid" || st=$?
  cpid=
  [ "$st" = 86 ] || fail "$1 $2: the server ended with $st, not the test crash (86)"
  grep -q "test fault: the process ends after $1" "$tmp/server.log" || fail "no crash logged"
  start
}
K1=0b7d3c1e-1111-4a2b-9c3d-000000000001
K2=0b7d3c1e-2222-4a2b-9c3d-000000000002
K3=0b7d3c1e-3333-4a2b-9c3d-000000000003

# 1. create namespace
crash POST /v1/namespaces "$K1" '{"namespace":["shop"],"properties":{"owner":"ops","k1":"v1"}}'
req POST /v1/namespaces "$K1" '{"namespace":["shop"],"properties":{"owner":"ops","k1":"v1"}}'
[ "$code" = 200 ] || fail "retried create: $code $(cat "$tmp/out")"
grep -q '"namespace":\["shop"\]' "$tmp/out" && grep -q '"owner":"ops"' "$tmp/out" ||
  fail "retried create: $(cat "$tmp/out")"
req POST /v1/namespaces "" '{"namespace":["shop"]}'
[ "$code" = 409 ] || fail "the namespace is not there once: a new create answered $code"

# 2. update properties
crash POST /v1/namespaces/shop/properties "$K2" '{"updates":{"k2":"v2"},"removals":["k1"]}'
req POST /v1/namespaces/shop/properties "$K2" '{"updates":{"k2":"v2"},"removals":["k1"]}'
[ "$code" = 200 ] || fail "retried update: $code $(cat "$tmp/out")"
grep -q '"removed":\["k1"\],"missing":\[\]' "$tmp/out" ||
  fail "the retried update was run again (or answered otherwise): $(cat "$tmp/out")"
req GET /v1/namespaces/shop ""
grep -q '"k2":"v2"' "$tmp/out" && ! grep -q '"k1"' "$tmp/out" || fail "properties: $(cat "$tmp/out")"

# 3. drop namespace
crash DELETE /v1/namespaces/shop "$K3"
req DELETE /v1/namespaces/shop "$K3"
[ "$code" = 204 ] || fail "retried drop: $code $(cat "$tmp/out")"
req GET /v1/namespaces/shop ""
[ "$code" = 404 ] || fail "the namespace is still there: $code"

# 4. the rows were written with the changes; a key reused for another request is a 400
stop
n=$(sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" \
  "SELECT COUNT(*) FROM floe_rest_idempotency WHERE idempotency_key IN ('$K1','$K2','$K3')")
[ "$n" = 3 ] || fail "$n recorded answers, expected 3"
body=$(sqlite3 "$tmp/wh/catalog.db" "SELECT body FROM floe_rest_idempotency WHERE idempotency_key = '$K2'")
echo "$body" | grep -q '"removed":\["k1"\]' || fail "the update's row: $body"
start
req POST /v1/namespaces "$K2" '{"namespace":["other"]}'
[ "$code" = 400 ] || fail "a key reused for another request answered $code"
stop
echo "rest_idem_crash: ok"
