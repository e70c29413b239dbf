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
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
[ -z "$oracle" ] || [ -d "$js/node_modules/$oracle" ] ||
  { echo "$name: SKIP: no $oracle (scripts/setup --test)"; exit 77; }

# the current metadata file of table $1
meta() { "$floe" table describe "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))'; }
# python expression $2 over table $1's current metadata document m
mq() { python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$(meta "$1")" "$2"; }

echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"v","required":false,"type":"long"}]}' > "$tmp/s.json"
"$floe" namespace create ns >/dev/null
