#!/usr/bin/env bash
# rest_cli_suite.sh [PART] - the table CLI tests of the SQL catalog again, through
# `floe catalog serve` (FLOE_TEST_CATALOG=rest: lib/table_cli_common.sh puts the server
# in front of its SQLite catalog and points FLOE_CATALOG_URI at it), and a format v1
# table through REST.
#
#  v1. a v1 table whose metadata holds only "schema" and "partition-spec" (no lists, no
#     current ids), registered through REST: an append, a partition change and a schema
#     change commit (before, every commit's requirements said current-schema-id -1, and
#     the server refused it with 409 until the retries gave up);
#  the others: table_toolbox.sh, snapshot_refs.sh, namespace_json.sh,
#     dropped_source_spec.sh, append_copy.sh, append_race.sh (its third process holds the
#     write lock of the SQLite file behind the server), cli_papercuts_table.sh (a table
#     whose metadata files are gone: the server answers its load 500, not 404, and floe
#     maintain fails in each job as on SQL) and table_schema_evolve.sh (schema and
#     partition evolution, icebird reading the result) pass through REST.
# Without PART it runs every part; ctest runs each part as a test of its own
# (int_rest_cli_suite.PART, CMakeLists.txt), so that the parts pack among the other tests
# and none nears the time-out on a loaded machine (all of them in one test took 848 s of
# its 900 at load ~15).
# ctest parts: v1 table_toolbox snapshot_refs namespace_json dropped_source_spec append_copy append_race cli_papercuts_table table_schema_evolve
set -euo pipefail
name=rest_cli_suite oracle=
here=$(cd "$(dirname "$0")" && pwd)
read -r -a parts <<< "$(sed -n 's/^# ctest parts: //p' "$0")"
part=${1:-}
if [ -n "$part" ] && [ "$part" != v1 ]; then
  case " ${parts[*]} " in
    *" $part "*) ;;
    *) echo "$name: unknown part '$part' (parts: ${parts[*]})" >&2; exit 2 ;;
  esac
  rc=0
  FLOE_TEST_CATALOG=rest bash "$here/$part.sh" || rc=$?
  case $rc in
    0) echo "$name: $part through REST: ok" ;;
    77) echo "$name: $part through REST: skipped ($part.sh skipped)"; exit 77 ;;
    *) echo "$name: FAIL: $part through REST (exit $rc)" >&2; exit 1 ;;
  esac
  exit 0
fi
FLOE_TEST_CATALOG=rest
source "$here/lib/table_cli_common.sh"
unset FLOE_TEST_CATALOG

# v1. a format v1 table through REST
mkdir -p "$tmp/wh/ns/v1/metadata"
python3 - "$tmp/wh/ns/v1" "$tmp/s.json" <<'EOF'
import json, sys
loc, schema = sys.argv[1], json.load(open(sys.argv[2]))
json.dump({"format-version": 1, "table-uuid": "5f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b",
           "location": "file://" + loc, "last-updated-ms": 1700000000000, "last-column-id": 2,
           "schema": schema, "partition-spec": [{"source-id": 1, "transform": "identity",
           "name": "k", "field-id": 1000}], "properties": {}, "snapshots": []},
          open(loc + "/metadata/v1.metadata.json", "w"))
EOF
"$floe" table register ns.v1 "$tmp/wh/ns/v1/metadata/v1.metadata.json" >/dev/null || fail "register v1"
printf '{"k":"a","v":1}\n{"k":"b","v":2}\n' > "$tmp/v1.ndjson"
"$floe" append ns.v1 "$tmp/v1.ndjson" >/dev/null 2>"$tmp/err" || fail "v1 append: $(cat "$tmp/err")"
"$floe" table partition ns.v1 add-field 'truncate(5, v)' >/dev/null 2>"$tmp/err" || fail "v1 add-field: $(cat "$tmp/err")"
"$floe" table schema ns.v1 add-column w string >/dev/null 2>"$tmp/err" || fail "v1 add-column: $(cat "$tmp/err")"
"$floe" append ns.v1 "$tmp/v1.ndjson" >/dev/null 2>"$tmp/err" || fail "v1 second append: $(cat "$tmp/err")"
[ "$(mq ns.v1 'm["format-version"], len(m["snapshots"])')" = "(1, 2)" ] ||
  fail "v1 table: $(mq ns.v1 'm["format-version"], len(m["snapshots"])')"
n=$("$floe" scan ns.v1 --columns k | wc -l)
[ "$n" = 4 ] || fail "v1 table: $n rows, expected 4"

# the table CLI tests through REST, when every part runs
if [ -z "$part" ]; then
  for t in "${parts[@]}"; do
    [ "$t" != v1 ] || continue
    FLOE_TEST_CATALOG=rest bash "$here/$t.sh" > "$tmp/$t.log" 2>&1 ||
      fail "$t through REST: $(tail -5 "$tmp/$t.log")"
  done
fi
[ $fails = 0 ] || exit 1
echo "rest_cli_suite${part:+ $part}: ok"
