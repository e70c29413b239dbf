# rest_serve_common.sh - sourced by tests of `floe catalog serve` over raw HTTP
# (rest_body_budget.sh, rest_http_edges.sh, rest_slow_clients.sh, rest_utf8_paths.sh): a scratch SQLite catalog, the sanitizer exit
# codes, and start_server ARGS (the server on a free port: $port, $pid; its log
# $tmp/server.log), stopped at exit. Expects $name (the test's name) to be set.
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
}

# the server is still running (no sanitizer report ended it)
server_alive() {
  kill -0 "$pid" || { echo "$name: FAIL: the server died: $(tail -5 "$tmp/server.log")"; exit 1; }
}
