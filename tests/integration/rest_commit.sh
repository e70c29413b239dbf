#!/usr/bin/env bash
# rest_commit.sh - floe's REST client against floe's server when a commit's answer is
# lost (the server's test fault, FLOE_TEST_REST_FAULT), and Idempotency-Key both sides:
#
#  1. commit-500 / commit-drop: the commit lands, the answer is a 500 / the connection
#     drops. The client sends the same request again with the same Idempotency-Key, is
#     answered from the server's record (written in the swap's own transaction) and the
#     append counts once.
#  2. lost-500: the commit did not run; the retry with the key runs it, once.
#  3. commit-500 on every try: the retries are answered 500 too; the client reports the
#     unknown outcome, deletes nothing, loads the table, finds its snapshot: committed.
#  4. lost-drop on every try: nothing lands; the append fails with "commit state
#     unknown", the table is as it was, and the data files it wrote are all still there.
#  5. a key on a commit recorded by the swap: the same request with the same key again
#     (by curl) gets the recorded 200 with the same metadata location.
#  6. the server dies after committing (fault crash): the retry cannot connect, nor can
#     the reload; the append fails with "commit state unknown" and deletes nothing, and
#     the restarted server serves the landed snapshot, every file of it readable.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "rest_commit: python3 missing, skipped"; exit 77; }
command -v curl >/dev/null || { echo "rest_commit: curl missing, skipped"; exit 77; }

tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "rest_commit: FAIL: $*" >&2
  [ -f "$tmp/server.log" ] && tail -20 "$tmp/server.log" | sed 's/^/  server: /' >&2
  exit 1
}
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_TEST_REST_FAULT || true
export HOME=$tmp/home
mkdir -p "$HOME"
sql() { FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$floe" "$@"; }

# serve FAULT: (re)start the server over the SQLite catalog with that test fault
serve() {
  if [ -n "$pid" ]; then kill "$pid"; wait "$pid" || fail "the server did not stop cleanly"; fi
  rm -f "$tmp/port"
  FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_TEST_REST_FAULT="$1" FLOE_LOG=info \
    "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>>"$tmp/server.log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  [ -s "$tmp/port" ] || fail "the server did not start ($1)"
  base=http://127.0.0.1:$(cat "$tmp/port")
}
snapshots() { curl -s "$base/v1/namespaces/t/tables/events" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["metadata"].get("snapshots", [])))'; }
rows() { sql scan t.events | wc -l; }

printf '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}' > "$tmp/schema.json"
python3 -c 'import json; [print(json.dumps({"id": i})) for i in range(100)]' > "$tmp/ev.ndjson"
sql namespace create t >/dev/null
sql table create t.events --schema "$tmp/schema.json" >/dev/null
# a bad fault is refused
if FLOE_TEST_REST_FAULT=bogus sql catalog serve --listen 127.0.0.1:0 2>"$tmp/err"; then
  fail "FLOE_TEST_REST_FAULT=bogus accepted"
fi
grep -q "FLOE_TEST_REST_FAULT" "$tmp/err" || fail "bad fault message: $(cat "$tmp/err")"

n=0
for fault in commit-500 commit-drop lost-500; do
  serve "$fault:1"
  curl -s "$base/v1/config" | grep -q '"idempotency-key-lifetime"' || fail "no idempotency-key-lifetime"
  FLOE_CATALOG_URI=$base FLOE_WAREHOUSE=$tmp/wh FLOE_LOG=info \
    "$floe" append t.events "$tmp/ev.ndjson" >"$tmp/out" 2>"$tmp/client.log" ||
    fail "$fault: append failed: $(cat "$tmp/client.log")"
  n=$((n + 1))
  grep -q "sending it again with Idempotency-Key" "$tmp/client.log" ||
    fail "$fault: the client did not retry with its key: $(cat "$tmp/client.log")"
  [ "$(snapshots)" = $n ] || fail "$fault: $(snapshots) snapshots after $n appends"
  [ "$(rows)" = $((n * 100)) ] || fail "$fault: $(rows) rows after $n appends"
  echo "rest_commit $fault: ok"
done
grep -q "the recorded answer (200) again" "$tmp/server.log" || fail "no answer from the record"

# 3. every try answered 500 after the commit: unknown, settled by loading the table
serve commit-500:100
FLOE_CATALOG_URI=$base FLOE_WAREHOUSE=$tmp/wh FLOE_LOG=info \
  "$floe" append t.events "$tmp/ev.ndjson" >"$tmp/out" 2>"$tmp/client.log" ||
  fail "commit-500 every time: append failed: $(cat "$tmp/client.log")"
n=$((n + 1))
grep -q "unknown state settled" "$tmp/client.log" || fail "not settled by loading: $(cat "$tmp/client.log")"
[ "$(snapshots)" = $n ] || fail "commit-500 every time: $(snapshots) snapshots"
[ "$(rows)" = $((n * 100)) ] || fail "commit-500 every time: $(rows) rows"
echo "rest_commit commit-500 every try: ok"

# 4. nothing lands: unknown, nothing deleted, the table unchanged
serve lost-drop:100
files() { find "$tmp/wh" -type f | sort; }
files > "$tmp/before"
if FLOE_CATALOG_URI=$base FLOE_WAREHOUSE=$tmp/wh "$floe" append t.events "$tmp/ev.ndjson" \
     >"$tmp/out" 2>"$tmp/client.log"; then
  fail "lost-drop every time: the append succeeded"
fi
grep -q "commit state unknown" "$tmp/client.log" || fail "lost-drop: $(cat "$tmp/client.log")"
[ "$(snapshots)" = $n ] || fail "lost-drop: $(snapshots) snapshots"
[ "$(rows)" = $((n * 100)) ] || fail "lost-drop: $(rows) rows"
files > "$tmp/after"
comm -23 "$tmp/before" "$tmp/after" | grep . && fail "lost-drop: files were deleted"
[ "$(comm -13 "$tmp/before" "$tmp/after" | grep -c '\.parquet$')" -ge 1 ] ||
  fail "lost-drop: the append wrote no data file (nothing to keep?)"
echo "rest_commit lost-drop every try: ok"

# 5. a commit recorded by its swap, replayed to curl
serve commit-500:1
uuid=$(curl -s "$base/v1/namespaces/t/tables/events" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["table-uuid"])')
key=0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9
req='{"requirements":[{"type":"assert-table-uuid","uuid":"'$uuid'"}],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}'
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/b1" -w '%{http_code}' -H "Idempotency-Key: $key" -X POST "$base/v1/namespaces/t/tables/events" -d "$req")
[ "$code" = 500 ] || fail "the faulted commit answered $code"
code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/b2" -w '%{http_code}' -H "Idempotency-Key: $key" -X POST "$base/v1/namespaces/t/tables/events" -d "$req")
[ "$code" = 200 ] || fail "the retry answered $code: $(cat "$tmp/b2")"
loc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata-location"])' "$tmp/b2")
now=$(curl -s "$base/v1/namespaces/t/tables/events" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata-location"])')
[ "$loc" = "$now" ] || fail "the replayed answer names $loc, the table is at $now"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["metadata"]["properties"]["k"] == "v"' "$tmp/b2" ||
  fail "the replayed metadata lacks the change"
echo "rest_commit replay: ok"

# 6. the server dies after the swap: the retry and the reload cannot connect
serve crash:1
files > "$tmp/before"
if FLOE_CATALOG_URI=$base FLOE_WAREHOUSE=$tmp/wh "$floe" append t.events "$tmp/ev.ndjson" \
     >"$tmp/out" 2>"$tmp/client.log"; then
  fail "crash: the append succeeded"
fi
rc=0; wait "$pid" || rc=$?
pid=
[ $rc = 86 ] || fail "crash: the server exited $rc, not 86"
grep -q "commit state unknown" "$tmp/client.log" || fail "crash: $(cat "$tmp/client.log")"
files > "$tmp/after"
comm -23 "$tmp/before" "$tmp/after" | grep . && fail "crash: files were deleted"
serve ""
n=$((n + 1))
[ "$(snapshots)" = $n ] || fail "crash: $(snapshots) snapshots, want $n (the commit landed)"
[ "$(rows)" = $((n * 100)) ] || fail "crash: $(rows) rows after the landed commit"
echo "rest_commit crash after the swap: ok"

kill "$pid"
wait "$pid" || fail "the server did not stop cleanly"
pid=
echo "rest_commit: ok"
