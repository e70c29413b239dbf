#!/usr/bin/env bash
# name_mapping_evolve.sh - a table read through its name mapping (Parquet files without
# field ids, here written by DuckDB) keeps reading new files after `floe table schema`
# changes (format/spec.md "Column Projection", "Schema Evolution"): the change carries
# schema.name-mapping.default along in the same commit, as Iceberg's schema update does.
#   - add-column: a file appended after it holding the new column reads its values (not
#     null), at the top level and inside a struct;
#   - rename-column: a file with the new name reads its values, the files with the old
#     name still do (the mapping keeps both names);
#   - drop-column + add-column of the same name: the name maps to the new field;
#   - floe rewrite keeps every value; a change that touches no name leaves the mapping;
#   - `table properties set` / `table create --property` refuse a mapping floe cannot
#     read (not JSON, not an array, a name twice in one level): exit 2 naming it, the
#     table unchanged and still scannable.
set -euo pipefail
name=name_mapping_evolve oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

cat > "$tmp/w.mjs" <<'EOF'
const [api, sql] = process.argv.slice(2)
const { DuckDBInstance } = await import(api)
const c = await (await DuckDBInstance.create(':memory:')).connect()
await c.run(sql)
EOF
# write a Parquet file without field ids: sql SELECT FILE
duck() { node "$tmp/w.mjs" "$js/node_modules/@duckdb/node-api/lib/index.js" "COPY ($1) TO '$2' (FORMAT parquet)"; }
prop() { mq ns.t "m['properties'].get('schema.name-mapping.default')"; }
rows() { "$floe" scan ns.t --where "$1" | sort | tr '\n' ' '; }
# the rows matching $1, sorted and joined by spaces, must be $2; $3 says what was read
expect_rows() { local got; got=$(rows "$1"); [ "$got" = "$2" ] || fail "$3: $got"; }
# `floe ARGS...` must be refused as a usage error naming the property; $1 says what
refused() {
  local what=$1 rc=0; shift
  "$floe" "$@" >/dev/null 2>"$tmp/err" || rc=$?
  [ $rc -eq 2 ] && grep -q 'schema.name-mapping.default' "$tmp/err" || fail "$what: rc $rc $(cat "$tmp/err")"
}

echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"name","required":false,"type":"string"},{"id":3,"name":"s","required":false,"type":{"type":"struct","fields":[{"id":4,"name":"a","required":false,"type":"long"}]}}]}' > "$tmp/t.json"
"$floe" table create ns.t --schema "$tmp/t.json" >/dev/null
duck "SELECT range::BIGINT id, 'a' AS name, {'a': range::BIGINT} AS s FROM range(2)" "$tmp/f1.parquet"
"$floe" append ns.t "$tmp/f1.parquet" >/dev/null
[ "$(prop)" = '[{"field-id":1,"names":["id"]},{"field-id":2,"names":["name"]},{"field-id":3,"names":["s"],"fields":[{"field-id":4,"names":["a"]}]}]' ] ||
  fail "mapping written by the first append: $(prop)"

# add-column, top level and inside the struct
"$floe" table schema ns.t add-column extra long >/dev/null
"$floe" table schema ns.t add-column s.b string >/dev/null
duck "SELECT (10+range)::BIGINT id, 'b' AS name, {'a': range::BIGINT, 'b': 'x'||range} AS s, range::BIGINT*7 AS extra FROM range(2)" "$tmp/f2.parquet"
"$floe" append ns.t "$tmp/f2.parquet" >/dev/null
expect_rows 'id >= 10' '{"id":10,"name":"b","s":{"a":0,"b":"x0"},"extra":0} {"id":11,"name":"b","s":{"a":1,"b":"x1"},"extra":7} ' \
  "added columns read from a file appended after add-column"
expect_rows 'id < 10' '{"id":0,"name":"a","s":{"a":0,"b":null},"extra":null} {"id":1,"name":"a","s":{"a":1,"b":null},"extra":null} ' \
  "files from before add-column"

# rename-column: new files by the new name, old files by the old one
"$floe" table schema ns.t rename-column name label >/dev/null
"$floe" table schema ns.t rename-column s.a aa >/dev/null
duck "SELECT (20+range)::BIGINT id, 'c' AS label, {'aa': 5::BIGINT, 'b': 'y'} AS s, 1::BIGINT AS extra FROM range(1)" "$tmp/f3.parquet"
"$floe" append ns.t "$tmp/f3.parquet" >/dev/null
expect_rows 'id >= 20' '{"id":20,"label":"c","s":{"aa":5,"b":"y"},"extra":1} ' \
  "renamed columns read from a file appended after rename-column"
expect_rows "label = 'a'" '{"id":0,"label":"a","s":{"aa":0,"b":null},"extra":null} {"id":1,"label":"a","s":{"aa":1,"b":null},"extra":null} ' \
  "files with the old name after rename-column"

# drop-column + add-column of the same name: the name is the new field's
"$floe" table schema ns.t drop-column label >/dev/null
"$floe" table schema ns.t add-column label string >/dev/null
duck "SELECT (30+range)::BIGINT id, 'new'||range AS label, {'aa': 6::BIGINT, 'b': 'z'} AS s, 2::BIGINT AS extra FROM range(2)" "$tmp/f4.parquet"
"$floe" append ns.t "$tmp/f4.parquet" >/dev/null
expect_rows "label = 'new1'" '{"id":31,"s":{"aa":6,"b":"z"},"extra":2,"label":"new1"} ' \
  "re-added column read from a file appended after drop + add"

# a change that touches no name leaves the mapping as it is
before=$(prop)
"$floe" table schema ns.t move-column extra first >/dev/null
[ "$(prop)" = "$before" ] || fail "move-column changed the mapping: $before -> $(prop)"

# rewrite keeps every value
want=$("$floe" scan ns.t | sort)
"$floe" rewrite ns.t --option rewrite-all=true >/dev/null || fail "rewrite"
[ "$("$floe" scan ns.t | sort)" = "$want" ] || fail "rewrite changed the rows: $("$floe" scan ns.t | sort)"
grep -q '"extra":0' <<< "$("$floe" scan ns.t --where 'id = 10')" || fail "rewrite lost extra"

# a mapping floe cannot read is refused where it is set
good=$(prop)
for bad in garbage '{}' '[{"field-id":1}]' '[{"field-id":1,"names":["id"]},{"field-id":2,"names":["id"]}]' \
           '[{"field-id":1,"names":["id"],"fields":7}]'; do
  refused "properties set mapping '$bad'" table properties ns.t set "schema.name-mapping.default=$bad"
done
[ "$(prop)" = "$good" ] || fail "a refused mapping changed the table: $(prop)"
"$floe" scan ns.t >/dev/null || fail "scan after refused mappings"
refused "table create --property bad mapping" \
  table create ns.u --schema "$tmp/t.json" --property schema.name-mapping.default=nope
"$floe" table properties ns.t set 'schema.name-mapping.default=[{"field-id":1,"names":["id"]}]' >/dev/null ||
  fail "a good mapping refused"

[ "$fails" -eq 0 ] || exit 1
echo "$name: ok"
