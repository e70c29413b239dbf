# rest_serve_common.sh - sourced by tests of `floe catalog serve` over raw HTTP
# (rest_body_budget.sh, rest_http_edges.sh, rest_slow_clients.sh, rest_utf8_paths.sh,
# rest_commit_paths.sh, rest_create_grant.sh, ...): a scratch SQLite catalog, the sanitizer
# exit codes, and start_server ARGS (the server on a free port: $port, $base, $pid; its
# log $tmp/server.log), stopped at exit; fail, req, expect and jget below. Expects $name
# (the test's name) to be set.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "$name: python3 missing, skipped"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_TEST_REST_FAULT || true
export FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=$tmp/wh
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98

start_server() {
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" "$@" 2>"$tmp/server.log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  [ -s "$tmp/port" ] || { echo "$name: FAIL: the server did not start: $(cat "$tmp/server.log")"; exit 1; }
  port=$(cat "$tmp/port")
  base=http://127.0.0.1:$port
}

# fail MESSAGE: the test fails at once, with the server's last log lines
fail() {
  echo "$name: FAIL: $*" >&2
  tail -5 "$tmp/server.log" 2>/dev/null | sed 's/^/  server: /' >&2
  exit 1
}

# req TOKEN METHOD PATH [BODY]: the HTTP status of a request to the server with a bearer
# token (curl); the answer's body in $tmp/body
req() {
  local tok=$1 m=$2 p=$3
  shift 3
  curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $tok" \
    -H 'Content-Type: application/json' -X "$m" "$base$p" \
    ${1+-d "$1"}
}

# expect STATUS TOKEN METHOD PATH [BODY]: req, failing unless the status is STATUS
expect() {
  local want=$1 got
  shift
  got=$(req "$@")
  [ "$got" = "$want" ] || fail "$2 $3 (token $1) -> $got, expected $want: $(head -c 300 "$tmp/body")"
}

# jget EXPR: the JSON document on stdin, d, indexed by EXPR (e.g. '["metadata"]["location"]')
jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

# the server is still running (no sanitizer report ended it)
server_alive() {
  kill -0 "$pid" || { echo "$name: FAIL: the server died: $(tail -5 "$tmp/server.log")"; exit 1; }
}
