# tests/kafka/lib.sh - helpers for the kafka_* tests (sourced): a mock Kafka cluster
# (floe_kafka_mock) and any number of `floe serve` consumers in one group.
FLOE=${FLOE_BIN:-build/floe}
MOCK=${FLOE_KAFKA_MOCK:-$(dirname "$FLOE")/floe_kafka_mock}
KAFKA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ ! -x "$MOCK" ]; then
  echo "SKIP: $MOCK not built (librdkafka-dev missing?)"
  exit 77
fi
tmp=$(mktemp -d)
declare -A node_pid=()
mock_pid=
cleanup() {
  for n in "${!node_pid[@]}"; do kill -9 "${node_pid[$n]}" 2>/dev/null || true; done
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null || true
  exec 3>&- 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
# No silent exit: a command failing under `set -e` names itself (functions inherit the trap).
set -E
trap 'echo "FAIL: line $LINENO: \"$BASH_COMMAND\" exited $?" >&2' ERR
fail() {
  echo "FAIL: $*" >&2
  [ -s "$tmp/mock.err" ] && tail -5 "$tmp/mock.err" >&2
  for f in "$tmp"/node-*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -15 "$f" >&2; }; done
  exit 1
}
# mock_start BROKERS: the cluster, its bootstrap servers in $bootstrap
mock_start() {
  mkfifo "$tmp/mock.in"
  "$MOCK" "$tmp/bootstrap" "$1" <"$tmp/mock.in" >"$tmp/mock.out" 2>"$tmp/mock.err" &
  mock_pid=$!
  exec 3>"$tmp/mock.in"
  for _ in $(seq 200); do [ -s "$tmp/bootstrap" ] && break; sleep 0.05; done
  bootstrap=$(cat "$tmp/bootstrap") || fail "mock cluster did not start"
}
# mock CMD...: run a command, wait for its answer
mock() {
  local n
  n=$(wc -l <"$tmp/mock.out")
  echo "$*" >&3
  for _ in $(seq 2400); do
    if [ "$(wc -l <"$tmp/mock.out")" -gt "$n" ]; then
      tail -n +$((n + 1)) "$tmp/mock.out" | grep -q "^ok " || fail "mock: $* -> $(tail -1 "$tmp/mock.out")"
      return 0
    fi
    sleep 0.05
  done
  fail "mock: $* did not finish"
}
# server_section NODE: the [server] section of a node's configuration
server_section() {
  cat <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
node_id = $1
wal_dir = $tmp/wal-$1
maintain = false
CONF
}
# table_section TABLE [KEY=VALUE...]: a [table TABLE] section with the schema
# $tmp/schema.json, each further argument a line `KEY = VALUE`
table_section() {
  printf '[table %s]\nschema = %s\n' "$1" "$tmp/schema.json"
  shift
  conf_lines "$@"
}
# source_section NAME TOPICS GROUP TABLE [KEY=VALUE...]: a [source kafka NAME] section
# reading TOPICS of the mock cluster in group GROUP into TABLE, each further argument a
# line `KEY = VALUE` (in the order given)
source_section() {
  printf '[source kafka %s]\nbootstrap.servers = %s\ntopics = %s\ngroup.id = %s\ntable = %s\n' \
    "$1" "$bootstrap" "$2" "$3" "$4"
  shift 4
  conf_lines "$@"
}
# conf_lines KEY=VALUE...: a line `KEY = VALUE` each (VALUE may hold `=`)
conf_lines() {
  local kv
  for kv in "$@"; do printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"; done
}
# node_start NAME CONFIG: floe serve NAME in the background (log $tmp/node-NAME.log)
node_start() {
  rm -f "$tmp/port-$1"
  "$FLOE" serve --config "$2" --port-file "$tmp/port-$1" 2>>"$tmp/node-$1.log" &
  node_pid[$1]=$!
  for _ in $(seq 600); do
    [ -s "$tmp/port-$1" ] && return 0
    kill -0 "${node_pid[$1]}" 2>/dev/null || fail "node $1 exited at start"
    sleep 0.05
  done
  fail "node $1 did not start"
}
node_stop() {
  kill -TERM "${node_pid[$1]}"
  wait "${node_pid[$1]}" || fail "node $1 exit status $?"
  unset "node_pid[$1]"
}
node_kill() {
  kill -9 "${node_pid[$1]}" 2>/dev/null || true
  wait "${node_pid[$1]}" 2>/dev/null || true
  unset "node_pid[$1]"
}
# scan_count TABLE: its rows (0 for a table no node has created yet); a failed scan of an
# existing table fails the test with floe's message: readers never fail beside a commit
scan_count() {
  if FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" scan "$1" \
    --columns event_id >"$tmp/scan.out" 2>"$tmp/scan.err"; then
    wc -l <"$tmp/scan.out"
  elif grep -q "table $1 does not exist" "$tmp/scan.err"; then
    echo 0
  else
    echo "FAIL: floe scan $1: $(head -c 500 "$tmp/scan.err")" >&2
    return 1
  fi
}
# wait_rows TABLE N SECONDS: until the table holds N rows
wait_rows() {
  local got=0
  for _ in $(seq $(($3 * 5))); do
    got=$(scan_count "$1") || fail "scan of $1 failed"
    [ "$got" -ge "$2" ] && return 0
    sleep 0.2
  done
  fail "$1 holds $got rows after $3 s, expected $2"
}
# metric NAME [SOURCE [NODE]]: a source's metric from a node's /metrics (source ev, node a)
metric() {
  curl -sf "http://127.0.0.1:$(cat "$tmp/port-${3:-a}")/metrics" >"$tmp/metrics" ||
    fail "metrics of node ${3:-a}"
  sed -n "s/^$1{source=\"${2:-ev}\"} //p" "$tmp/metrics"
}
# until_metric NAME MIN SECONDS: waits until metric NAME (source ev, node a) is MIN at least
until_metric() {
  for _ in $(seq $(($3 * 10))); do
    [ "$(metric "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "$1 = $(metric "$1") after $3 s, expected $2 at least"
}
# need_chattr: exits 77 (skip) unless chattr +i makes a folder immutable here
need_chattr() {
  mkdir -p "$tmp/probe"
  if ! chattr +i "$tmp/probe" 2>/dev/null || touch "$tmp/probe/x" 2>/dev/null; then
    chattr -i "$tmp/probe" 2>/dev/null || true
    echo "SKIP: chattr +i not possible here (needs root and a file system with the flag)"
    exit 77
  fi
  chattr -i "$tmp/probe"
}
# flush_until TABLE ROWS: the admin flush on node a every 0.5 s (30 s at most) until TABLE
# holds ROWS events; fails otherwise
flush_until() {
  for _ in $(seq 60); do
    curl -s -o /dev/null -XPOST "http://127.0.0.1:$(cat "$tmp/port-a")/v1/admin/flush" || true
    [ "$(scan_count "$1")" = "$2" ] && return 0
    sleep 0.5
  done
  fail "$1 holds $(scan_count "$1") events, expected $2"
}
