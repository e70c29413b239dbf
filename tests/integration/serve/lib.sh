# tests/integration/serve/lib.sh - shared set-up and helpers of the serve_* tests, sourced
# right after `set -euo pipefail`. It makes the folder $tmp and sets an EXIT trap, cleanup,
# that stops what the test started: the server of start_server ($pid, SIGKILL), every
# process the test put in pids (SIGTERM, then waited for), the tmpfs of mount_tmpfs; then
# it removes $tmp (kept when KEEP is set). A test that sets its own trap calls cleanup in it.
# serve_s3 adds the S3 server of tests/js, serve_pg_s3 PostgreSQL and that S3 server.
SERVE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${FLOE_SOURCE_DIR:-$(cd "$SERVE_DIR/../../.." && pwd)}
FLOE=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
serve_name=$(basename "$0" .sh)
tmp=$(mktemp -d)
pid=
pids=()
mounts=()
cleanup() {
  local p m
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  pid=
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for m in "${mounts[@]}"; do if mountpoint -q "$m"; then umount "$m"; fi; done
  [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
# fail MESSAGE: says it with the test's name, shows the end of every log in $tmp, exits 1
fail() {
  local f
  echo "$serve_name: FAIL: $*" >&2
  for f in "$tmp"/*.log; do
    if [ -f "$f" ]; then echo "== $f" >&2; tail -30 "$f" >&2; fi
  done
  exit 1
}
# mount_tmpfs DIR SIZE: a tmpfs of SIZE (mount's size=) at DIR, made here and unmounted by
# cleanup; where no tmpfs can be mounted (it takes root) the test is skipped: a SKIPPED
# line, exit 77
mount_tmpfs() {
  mkdir -p "$1"
  if ! mount -t tmpfs -o "size=$2" tmpfs "$1" 2> "$tmp/mount.err"; then
    echo "$serve_name: SKIPPED (1 test): cannot mount a tmpfs here: $(cat "$tmp/mount.err")"
    exit 77
  fi
  mounts+=("$1")
}
# serve_s3: the signature-checking S3 server of tests/js (tests/lib/s3sig.sh, bucket wh;
# S3SIG_ARGS passed on, AWS_ENDPOINT_URL_S3 and the keys exported), stopped at exit;
# FLOE_CONFIG, FLOE_CATALOG_TYPE and FLOE_CATALOG unset
serve_s3() {
  unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true
  source "$src/tests/lib/s3sig.sh"
  s3sig_start "$tmp" || fail "could not start the S3 server"
}
# serve_pg_s3: floe on PostgreSQL + s3://: a PostgreSQL server (tests/lib/pg.sh,
# $FLOE_PG_URI; without its server binaries the test is skipped: a SKIPPED line, exit 77)
# stopped at exit after cleanup, then serve_s3. TMPDIR is $tmp: the staging folders
# (floe-compact-*) of the floe processes a test kills go with it.
serve_pg_s3() {
  source "$src/tests/lib/pg.sh"
  pg_start_test "$serve_name"
  # pg_start chained pg_stop before cleanup ($PG_PREV_TRAP): floe's processes go first
  trap 'eval "$PG_PREV_TRAP"; pg_stop' EXIT
  export TMPDIR=$tmp
  serve_s3
}
# landing_uncommitted: how many landing files PostgreSQL's landing index holds uncommitted
landing_uncommitted() {
  pg_sql "SELECT COUNT(*) FROM landing_files WHERE kind=1 AND state<>'committed'"
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
  for _ in $(seq 600); do
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
