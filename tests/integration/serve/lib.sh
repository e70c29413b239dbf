# tests/integration/serve/lib.sh - shared helpers for the serve_* tests (sourced).
FLOE=${FLOE_BIN:-build/floe}
SERVE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
pid=
cleanup() { if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi; rm -rf "$tmp"; }
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  if [ -f "$tmp/server.log" ]; then tail -30 "$tmp/server.log" >&2; fi
  exit 1
}
# wait_for SECONDS 'CONDITION': evaluates the shell condition every 0.1 s until it holds
# (status 0) or about SECONDS pass (then the condition's last status). Waits are long:
# the tests run under the sanitizers on a loaded machine, and a condition that holds
# ends the wait at once.
wait_for() {
  local i
  for ((i = 0; i < $1 * 10; i++)); do
    eval "$2" && return 0
    sleep 0.1
  done
  eval "$2"
}
# start_server ARGS... : starts floe serve in the background, waits for its port file
start_server() {
  rm -f "$tmp/port"
  "$FLOE" serve "$@" --port-file "$tmp/port" 2>>"$tmp/server.log" &
  pid=$!
  for _ in $(seq 400); do
    if [ -s "$tmp/port" ]; then port=$(cat "$tmp/port"); return 0; fi
    kill -0 "$pid" 2>/dev/null || fail "server exited at start"
    sleep 0.05
  done
  fail "server did not start"
}
# start_on_v2_v3: tables ns.v2 and ns.v3 (format versions 2 and 3) of one required long
# column id in the warehouse $tmp/wh (FLOE_WAREHOUSE), then start_server on them
start_on_v2_v3() {
  export FLOE_WAREHOUSE="$tmp/wh"
  "$FLOE" namespace create ns >/dev/null
  echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"}]}' \
    > "$tmp/s.json"
  "$FLOE" table create ns.v2 --schema "$tmp/s.json" >/dev/null
  "$FLOE" table create ns.v3 --schema "$tmp/s.json" --property format-version=3 >/dev/null
  start_server --warehouse "$tmp/wh" --listen 127.0.0.1:0
}
stop_server() {
  kill -TERM "$pid"
  wait "$pid" || fail "server exit status $?"
  pid=
}
# flush_wait [CURL ARGS...]: seal every buffer and compact every landing file registered so
# far, waiting (at most 120 s) until none is pending; fails unless the answer is 200 and
# complete (a 202 names what is still pending and why)
flush_wait() {
  local code
  code=$(curl -s -o "$tmp/flush.out" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/admin/flush?wait=true&timeout=120" "$@")
  [ "$code" = 200 ] && grep -q '"complete":true' "$tmp/flush.out" ||
    fail "flush: HTTP $code $(head -c 1000 "$tmp/flush.out")"
}
