#!/usr/bin/env bash
# name_mapping_retype.sh - issue 24: a table that reads Parquet files without field ids
# through its name mapping (schema.name-mapping.default; here DuckDB's files). A column
# dropped and added again under the same name takes the name in the mapping, as Iceberg's
# schema update does (MappingUtil.update: the name moves to the new field), so the old
# files' column is read as the new field. With another type every scan then failed on a
# type error. floe table schema now refuses such a change (exit 1 like the spec's other
# refusals, naming the column, both fields and types, the table unchanged and scannable)
# when the old field's type is not the new one's or promoted to it:
#   - drop + add-column of another type, top level (string -> long) and a struct whose
#     field of the same name changed type; rename-column onto such a name;
#   - accepted: the same type (the old files' values read again, as in Iceberg), a
#     promotion (int -> long), any type where the name maps nothing, a table without a
#     mapping.
set -euo pipefail
name=name_mapping_retype oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

cat > w.mjs <<'JS'
const [api, sql] = process.argv.slice(2)
const { DuckDBInstance } = await import(api)
const c = await (await DuckDBInstance.create(':memory:')).connect()
await c.run(sql)
JS
# write a Parquet file without field ids: duck SELECT FILE
duck() { node w.mjs "$js/node_modules/@duckdb/node-api/lib/index.js" "COPY ($1) TO '$2' (FORMAT parquet)"; }
rows() { "$floe" scan ns.t | sort | tr '\n' ' '; }
schema() { "$floe" table schema ns.t --json; }
# TEXT ARGS...: `floe table schema ns.t ARGS` refused (exit 1) naming TEXT, schema unchanged
refused() {
  local text=$1 rc=0 before
  shift
  before=$(schema)
  "$floe" table schema ns.t "$@" >/dev/null 2>err.txt || rc=$?
  [ $rc = 1 ] && grep -qF -- "$text" err.txt && grep -q 'schema.name-mapping.default' err.txt ||
    fail "schema $*: exit $rc, $(cat err.txt)"
  [ "$(schema)" = "$before" ] || fail "schema $*: the refused change was committed"
  "$floe" scan ns.t >/dev/null 2>err.txt || fail "scan after the refused $*: $(cat err.txt)"
}
ok() { "$floe" table schema ns.t "$@" >/dev/null 2>err.txt || fail "schema $*: $(cat err.txt)"; }

echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"name","required":false,"type":"string"},{"id":3,"name":"n","required":false,"type":"int"},{"id":4,"name":"s","required":false,"type":{"type":"struct","fields":[{"id":5,"name":"a","required":false,"type":"long"}]}}]}' > t.json
"$floe" table create ns.t --schema t.json >/dev/null
duck "SELECT range::BIGINT id, 'a' AS name, (range + 1)::INTEGER n, {'a': range::BIGINT} AS s FROM range(2)" f1.parquet
"$floe" append ns.t f1.parquet >/dev/null
[ "$(rows)" = '{"id":0,"name":"a","n":1,"s":{"a":0}} {"id":1,"name":"a","n":2,"s":{"a":1}} ' ] || fail "rows: $(rows)"

# another type under the dropped column's name: refused
ok drop-column name
refused 'column name: ' add-column name long
refused 'string' add-column name 'struct<x: int>'
# the same type: the name is the new field's, old files read again (as in Iceberg)
ok add-column name string
[ "$(rows)" = '{"id":0,"n":1,"s":{"a":0},"name":"a"} {"id":1,"n":2,"s":{"a":1},"name":"a"} ' ] ||
  fail "re-added name string: $(rows)"
# a promotion: int files read as long
ok drop-column n
ok add-column n long
[ "$(rows)" = '{"id":0,"s":{"a":0},"name":"a","n":1} {"id":1,"s":{"a":1},"name":"a","n":2} ' ] ||
  fail "re-added n long: $(rows)"
# a struct whose field of the same name has another type
ok drop-column s
refused 'column s: ' add-column s 'struct<a: string>'
ok add-column s 'struct<a: long, b: string>'
# rename onto a name the mapping gives a field of another type
ok drop-column name
ok add-column label double
refused 'column name: ' rename-column label name
ok rename-column label other
# a name the mapping maps to nothing: any type
ok add-column fresh date
# new files still read by the mapping after all this
duck "SELECT 9::BIGINT id, 7::BIGINT n, {'a': 5::BIGINT, 'b': 'z'} AS s, 1.5::DOUBLE other, DATE '2026-12-05' fresh" f2.parquet
"$floe" append ns.t f2.parquet >/dev/null || fail "append after the changes"
[ "$("$floe" scan ns.t --where 'id = 9')" = '{"id":9,"n":7,"s":{"a":5,"b":"z"},"other":1.5,"fresh":"2026-12-05"}' ] ||
  fail "new file: $("$floe" scan ns.t --where 'id = 9')"

# a table without a name mapping: nothing to refuse
"$floe" table create ns.plain --schema t.json >/dev/null
printf '{"id":1,"name":"x","n":1}\n' > p.ndjson
"$floe" append ns.plain p.ndjson >/dev/null
"$floe" table schema ns.plain drop-column name >/dev/null
"$floe" table schema ns.plain add-column name long >/dev/null || fail "plain table: add-column name long"
[ "$("$floe" scan ns.plain)" = '{"id":1,"n":1,"s":null,"name":null}' ] || fail "plain table: $("$floe" scan ns.plain)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
