# table_cli_common.sh - sourced by the table CLI tests (table_toolbox.sh, snapshot_refs.sh,
# cli_papercuts_table.sh, ...): a scratch SQLite catalog, the sanitizer exit codes, a
# two-column schema, and reading a table's current metadata file as JSON (not through
# floe). Expects $name (the test's name) and $oracle (the tests/js package it needs;
# empty: none) to be set.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "$name: FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
catalog_db=$tmp/catalog.db # the SQLite file of the catalog (behind the server with REST)
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
[ -z "$oracle" ] || [ -d "$js/node_modules/$oracle" ] ||
  { echo "$name: SKIP: no $oracle (scripts/setup --test)"; exit 77; }
# FLOE_TEST_CATALOG=rest: the same commands through `floe catalog serve` over that
# SQLite catalog (rest_cli_suite.sh runs the table CLI tests so)
if [ "${FLOE_TEST_CATALOG:-}" = rest ]; then
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/rest.port" 2>"$tmp/rest.log" &
  rest_pid=$!
  trap 'kill "$rest_pid" 2>/dev/null; wait "$rest_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
  for _ in $(seq 100); do [ -s "$tmp/rest.port" ] && break; sleep 0.1; done
  [ -s "$tmp/rest.port" ] || { echo "$name: FAIL: floe catalog serve did not start: $(cat "$tmp/rest.log")"; exit 1; }
  export FLOE_CATALOG_URI=http://127.0.0.1:$(cat "$tmp/rest.port") FLOE_STATE_DB="$tmp/state.db"
fi

# the current metadata file of table $1
meta() { "$floe" table describe "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))'; }
# python expression $2 over table $1's current metadata document m
mq() { python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$(meta "$1")" "$2"; }

# swap TABLE FILE: FILE becomes ns.TABLE's current metadata, as another writer's commit
# would (the SQLite catalog only)
swap() {
  sqlite3 "$catalog_db" "UPDATE iceberg_tables SET metadata_location = 'file://$2',
    previous_metadata_location = metadata_location WHERE table_name = '$1'"
}
# write_paths_to TABLE FOLDER: another writer sets ns.TABLE's write.metadata.path and
# write.data.path to FOLDER/metadata and FOLDER/data (floe itself refuses such paths into
# another table's folder: write_path_place.sh)
write_paths_to() {
  local cur
  cur=$(meta "ns.$1")
  python3 - "$cur" "${cur%/*}/99998-paths.metadata.json" "$2" <<'PY'
import json, sys
cur, new, folder = sys.argv[1:]
m = json.load(open(cur))
m["properties"]["write.metadata.path"] = "file://" + folder + "/metadata"
m["properties"]["write.data.path"] = "file://" + folder + "/data"
m["metadata-log"].append({"timestamp-ms": m["last-updated-ms"], "metadata-file": "file://" + cur})
json.dump(m, open(new, "w"))
PY
  swap "$1" "${cur%/*}/99998-paths.metadata.json"
}

echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"v","required":false,"type":"long"}]}' > "$tmp/s.json"
"$floe" namespace create ns >/dev/null

# usage_refused WHAT TEXT ARGS...: floe ARGS is a usage error: exit 2, one line on stderr
# holding TEXT; with --json among ARGS the USAGE document on stdout, else nothing there
usage_refused() {
  local what=$1 text=$2 rc=0
  shift 2
  "$floe" "$@" >"$tmp/usage.out" 2>"$tmp/usage.err" || rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, want 2 ($(cat "$tmp/usage.err"))"
  [ "$(wc -l < "$tmp/usage.err")" = 1 ] || fail "$what: stderr is not one line: $(cat "$tmp/usage.err")"
  grep -qF -- "$text" "$tmp/usage.err" || fail "$what: '$text' not in: $(cat "$tmp/usage.err")"
  case " $* " in
  *" --json "*)
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["code"]=="USAGE" and e["exit"]==2, e' \
      "$tmp/usage.out" 2>/dev/null || fail "$what: stdout is not the USAGE document: $(cat "$tmp/usage.out")" ;;
  *) [ ! -s "$tmp/usage.out" ] || fail "$what: output on stdout: $(cat "$tmp/usage.out")" ;;
  esac
}
