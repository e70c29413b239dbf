#!/usr/bin/env bash
# table_evolution.sh - reading, rewriting and appending to a table whose schema evolved
# after its data files were written (format/spec.md "Schema Evolution", "Column
# Projection", "Default values"), and name mappings (an explicit mapping is
# authoritative, even `[]`).
#
# A Parquet file written by DuckDB with field ids is appended to a table; the table's
# metadata then gets a new schema: int -> long, float -> double, decimal(5,2) ->
# decimal(9,2), renamed columns (top-level and nested), fields added with initial-default
# and write-default at the top level, inside a struct, inside a map's value struct and a
# list's element struct, a struct added with default {} (its fields' defaults) and one
# with default null, a column dropped and re-added under a new id. Checked:
#   - floe scan gives the rows the spec gives (written out below), and so does every
#     projection of a nested field (--columns s.c, m.value.z, l.element.w, ...);
#   - floe rewrite writes the defaults into the new file: DuckDB reading that file alone
#     (no Iceberg logic) gives the same rows, and floe scan is unchanged;
#   - floe append of NDJSON fills absent fields from write-default (not initial-default),
#     again read back by DuckDB from the file itself, and so does floe serve; a Parquet
#     file lacking a column whose write-default differs from its initial-default is
#     refused;
#   - a DuckDB file without field ids read through the name mappings of duckdb-iceberg's
#     name_mapping test table: a mapping naming only `a` gives b null, `[]` gives both
#     null, no mapping at all reads by name.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "table_evolution: FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }
# canonical rows of a scan, sorted (file order differs after a rewrite)
rows() { "$floe" scan "$@" --format canonical | LC_ALL=C sort; }
# a new metadata file for table $1 from its current one, edited by the python in $2
# (variable m), registered as table $3
evolve() {
  local cur new
  cur=$("$floe" table describe "$1" --json | jget '["metadata_location"]')
  cur=${cur#file://} # recorded as a URI
  # a table location of its own (locations never nest); the data and manifests stay
  # where they are, the manifest lists are copied in (a table's manifest lists are its
  # own: register refuses one outside its folders)
  local loc="$tmp/evolved/$3"
  mkdir -p "$loc/metadata"
  new=$loc/metadata/00000-evolved.metadata.json
  python3 -c '
import json, os, shutil, sys
m = json.load(open(sys.argv[1]))
m["location"] = "file://" + sys.argv[4]
for s in m.get("snapshots", []):
    src = s["manifest-list"].removeprefix("file://")
    dst = os.path.join(sys.argv[4], "metadata", os.path.basename(src))
    shutil.copyfile(src, dst)
    s["manifest-list"] = "file://" + dst
exec(sys.argv[3])
json.dump(m, open(sys.argv[2], "w"))' "$cur" "$new" "$2" "$loc"
  "$floe" table register "$3" "$new" >/dev/null
}

"$floe" namespace create ev >/dev/null

# ---- the old file and the evolved schema ----------------------------------------------
cat > "$tmp/v0.json" <<'EOF'
{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","required":true,"type":"int"},
 {"id":2,"name":"name","required":false,"type":"string"},
 {"id":3,"name":"price","required":false,"type":"float"},
 {"id":4,"name":"amount","required":false,"type":"decimal(5,2)"},
 {"id":5,"name":"s","required":false,"type":{"type":"struct","fields":[
    {"id":6,"name":"a","required":false,"type":"int"},
    {"id":7,"name":"b","required":false,"type":"string"}]}},
 {"id":8,"name":"m","required":false,"type":{"type":"map","key-id":9,"key":"string","value-id":10,
    "value":{"type":"struct","fields":[{"id":11,"name":"x","required":false,"type":"int"}]},"value-required":false}},
 {"id":12,"name":"l","required":false,"type":{"type":"list","element-id":13,
    "element":{"type":"struct","fields":[{"id":14,"name":"y","required":false,"type":"int"}]},"element-required":false}},
 {"id":15,"name":"gone","required":false,"type":"string"}]}
EOF
cat > "$tmp/old.ndjson" <<'EOF'
{"id":1,"name":"one","price":1.5,"amount":"12.34","s":{"a":1,"b":"b1"},"m":{"k1":{"x":10},"k2":null},"l":[{"y":1},null],"gone":"g1"}
{"id":2,"name":null,"price":null,"amount":null,"s":null,"m":null,"l":null,"gone":null}
{"id":3,"name":"three","price":-0.25,"amount":"-1.00","s":{"a":null,"b":null},"m":{},"l":[],"gone":"g3"}
EOF
node "$js/duckdb_copy.mjs" --schema "$tmp/v0.json" "$tmp/old.ndjson" "$tmp/old.parquet"
"$floe" table create ev.t --schema "$tmp/v0.json" >/dev/null
"$floe" append ev.t "$tmp/old.parquet" >/dev/null

cat > "$tmp/v1.json" <<'EOF'
{"type":"struct","schema-id":1,"fields":[
 {"id":1,"name":"id","required":false,"type":"long"},
 {"id":2,"name":"title","required":false,"type":"string"},
 {"id":3,"name":"price","required":false,"type":"double"},
 {"id":4,"name":"amount","required":false,"type":"decimal(9,2)"},
 {"id":5,"name":"s","required":false,"type":{"type":"struct","fields":[
    {"id":6,"name":"alpha","required":false,"type":"int"},
    {"id":7,"name":"b","required":false,"type":"string"},
    {"id":16,"name":"c","required":false,"type":"int","initial-default":7,"write-default":8},
    {"id":17,"name":"d","required":false,"type":{"type":"struct","fields":[
       {"id":18,"name":"e","required":false,"type":"string","initial-default":"E","write-default":"E2"}]},
     "initial-default":{},"write-default":{}},
    {"id":19,"name":"dn","required":false,"type":{"type":"struct","fields":[
       {"id":20,"name":"f","required":false,"type":"int","initial-default":5,"write-default":5}]}}]}},
 {"id":8,"name":"m","required":false,"type":{"type":"map","key-id":9,"key":"string","value-id":10,
    "value":{"type":"struct","fields":[{"id":11,"name":"x","required":false,"type":"int"},
       {"id":21,"name":"z","required":false,"type":"int","initial-default":5,"write-default":6}]},"value-required":false}},
 {"id":12,"name":"l","required":false,"type":{"type":"list","element-id":13,
    "element":{"type":"struct","fields":[{"id":14,"name":"y","required":false,"type":"int"},
       {"id":22,"name":"w","required":false,"type":"string","initial-default":"w","write-default":"w2"}]},"element-required":false}},
 {"id":23,"name":"gone","required":false,"type":"string","initial-default":"new","write-default":"newer"},
 {"id":24,"name":"top","required":true,"type":"int","initial-default":42,"write-default":43},
 {"id":25,"name":"bin","required":false,"type":"binary","initial-default":"00ff","write-default":"0a"}]}
EOF
evolve ev.t "
s = json.load(open('$tmp/v1.json'))
m['schemas'].append(s)
m['current-schema-id'] = 1
m['last-column-id'] = 25" ev.t1

# the rows the spec gives: ids, renames, promotions; added fields from initial-default
cat > "$tmp/want.rows" <<'EOF'
{"id":1,"title":"one","price":1.5,"amount":"12.34","s":{"alpha":1,"b":"b1","c":7,"d":{"e":"E"},"dn":null},"m":[["k1",{"x":10,"z":5}],["k2",null]],"l":[{"y":1,"w":"w"},null],"gone":"new","top":42,"bin":"00ff"}
{"id":2,"title":null,"price":null,"amount":null,"s":null,"m":null,"l":null,"gone":"new","top":42,"bin":"00ff"}
{"id":3,"title":"three","price":-0.25,"amount":"-1.00","s":{"alpha":null,"b":null,"c":7,"d":{"e":"E"},"dn":null},"m":[],"l":[],"gone":"new","top":42,"bin":"00ff"}
EOF
LC_ALL=C sort "$tmp/want.rows" -o "$tmp/want.rows"
rows ev.t1 > "$tmp/got.rows" || fail "scan ev.t1"
cmp -s "$tmp/got.rows" "$tmp/want.rows" || { diff "$tmp/got.rows" "$tmp/want.rows" >&2 || true; fail "evolved scan differs from the spec's rows"; }

# projections of nested fields give the value at the path
proj() { "$floe" scan ev.t1 --columns "$1" --format canonical | LC_ALL=C sort | tr '\n' ' '; }
[ "$(proj s.c)" = '{"s.c":7} {"s.c":7} {"s.c":null} ' ] || fail "--columns s.c: $(proj s.c)"
[ "$(proj s.d.e)" = '{"s.d.e":"E"} {"s.d.e":"E"} {"s.d.e":null} ' ] || fail "--columns s.d.e: $(proj s.d.e)"
[ "$(proj s.d)" = '{"s.d":null} {"s.d":{"e":"E"}} {"s.d":{"e":"E"}} ' ] || fail "--columns s.d: $(proj s.d)"
[ "$(proj m.value.z)" = '{"m.value.z":[["k1",5],["k2",null]]} {"m.value.z":[]} {"m.value.z":null} ' ] ||
    fail "--columns m.value.z: $(proj m.value.z)"
[ "$(proj m.key)" = '{"m.key":["k1","k2"]} {"m.key":[]} {"m.key":null} ' ] || fail "--columns m.key: $(proj m.key)"
[ "$(proj l.element.w)" = '{"l.element.w":["w",null]} {"l.element.w":[]} {"l.element.w":null} ' ] ||
    fail "--columns l.element.w: $(proj l.element.w)"
[ "$(proj gone)" = '{"gone":"new"} {"gone":"new"} {"gone":"new"} ' ] || fail "--columns gone: $(proj gone)"
[ "$(proj s.alpha)" = '{"s.alpha":1} {"s.alpha":null} {"s.alpha":null} ' ] || fail "--columns s.alpha: $(proj s.alpha)"
[ "$("$floe" scan ev.t1 --where 's.c = 7' --format canonical | wc -l)" = 2 ] || fail "filter on a defaulted nested field"
[ "$("$floe" scan ev.t1 --where 'top = 42' --format canonical | wc -l)" = 3 ] || fail "filter on a defaulted column"

# ---- rewrite: the defaults are written into the new file ------------------------------
"$floe" rewrite ev.t1 --option rewrite-all=true --quiet || fail "rewrite ev.t1"
rows ev.t1 > "$tmp/after.rows"
cmp -s "$tmp/after.rows" "$tmp/want.rows" || { diff "$tmp/after.rows" "$tmp/want.rows" >&2 || true; fail "rows changed by the rewrite"; }
"$floe" scan ev.t1 --plan --json | python3 -c 'import json,sys; [print(f["local_path"]) for f in json.load(sys.stdin)["files"]]' > "$tmp/files"
[ "$(wc -l < "$tmp/files")" = 1 ] || fail "rewrite left $(wc -l < "$tmp/files") files"
# DuckDB reads the rewritten file on its own: every default is in it
node "$js/read_parquet.mjs" --reader duckdb --schema "$tmp/v1.json" $(cat "$tmp/files") | LC_ALL=C sort > "$tmp/duck.rows"
cmp -s "$tmp/duck.rows" "$tmp/want.rows" || { diff "$tmp/duck.rows" "$tmp/want.rows" >&2 || true; fail "DuckDB reads other values from the rewritten file"; }

# ---- append: absent fields take write-default -----------------------------------------
printf '%s\n' '{"id":4}' '{"id":5,"s":{},"m":{"k":{}},"l":[{}],"gone":null}' > "$tmp/new.ndjson"
"$floe" append ev.t1 "$tmp/new.ndjson" >/dev/null || fail "append NDJSON"
cat > "$tmp/want_new.rows" <<'EOF'
{"id":4,"title":null,"price":null,"amount":null,"s":null,"m":null,"l":null,"gone":"newer","top":43,"bin":"0a"}
{"id":5,"title":null,"price":null,"amount":null,"s":{"alpha":null,"b":null,"c":8,"d":{"e":"E2"},"dn":null},"m":[["k",{"x":null,"z":6}]],"l":[{"y":null,"w":"w2"}],"gone":null,"top":43,"bin":"0a"}
EOF
"$floe" scan ev.t1 --where 'id >= 4' --format canonical | LC_ALL=C sort > "$tmp/got_new.rows"
cmp -s "$tmp/got_new.rows" "$tmp/want_new.rows" || { diff "$tmp/got_new.rows" "$tmp/want_new.rows" >&2 || true; fail "appended rows"; }
"$floe" scan ev.t1 --where 'id >= 4' --plan --json | python3 -c 'import json,sys; [print(f["local_path"]) for f in json.load(sys.stdin)["files"]]' > "$tmp/newfiles"
node "$js/read_parquet.mjs" --reader duckdb --schema "$tmp/v1.json" $(cat "$tmp/newfiles") | LC_ALL=C sort > "$tmp/duck_new.rows"
cmp -s "$tmp/duck_new.rows" "$tmp/want_new.rows" || { diff "$tmp/duck_new.rows" "$tmp/want_new.rows" >&2 || true; fail "DuckDB reads other values from the appended file"; }
# an existing Parquet file without the added columns cannot be appended as is where
# readers would fill a column with another value than write-default ("gone": "new" vs
# "newer"); the table is unchanged
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
s["fields"] = [f for f in s["fields"] if f["id"] < 23]
json.dump(s, open(sys.argv[2], "w"))' "$tmp/v1.json" "$tmp/v1_old.json"
echo '{"id":9,"title":"nine"}' > "$tmp/nine.ndjson"
node "$js/duckdb_copy.mjs" --schema "$tmp/v1_old.json" "$tmp/nine.ndjson" "$tmp/nine.parquet"
set +e
"$floe" append ev.t1 "$tmp/nine.parquet" > /dev/null 2> "$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "column gone is missing" "$tmp/err" || fail "Parquet append without gone: rc $rc $(cat "$tmp/err")"
[ "$("$floe" scan ev.t1 --format canonical | wc -l)" = 5 ] || fail "refused append changed the table"
# a default that is not a value of its type is refused, naming the field
evolve ev.t "
s = json.load(open('$tmp/v1.json'))
s['fields'][1]['initial-default'] = 12
m['schemas'].append(s)
m['current-schema-id'] = 1
m['last-column-id'] = 25" ev.bad
set +e
"$floe" scan ev.bad > /dev/null 2> "$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "title: initial-default" "$tmp/err" || fail "bad default: rc $rc $(cat "$tmp/err")"

# ---- serve: records the server takes get write-defaults too ----------------------------
cat > "$tmp/srv.json" <<'EOF'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"n","required":false,"type":"int","write-default":7},
 {"id":3,"name":"s","required":false,"write-default":{},"type":{"type":"struct","fields":[
   {"id":4,"name":"a","required":false,"type":"string","write-default":"A"}]}}]}
EOF
mkdir -p "$tmp/srv"
before=$fails
(
  export FLOE_CATALOG=default # the catalog name floe serve uses
  "$floe" namespace create ev >/dev/null
  "$floe" table create ev.srv --schema "$tmp/srv.json" --property format-version=3 >/dev/null # defaults: v3
  "$floe" serve --warehouse "$tmp/wh" --catalog "$tmp/catalog.db" --listen 127.0.0.1:0 \
      --port-file "$tmp/srv/port" 2>> "$tmp/srv/log" &
  spid=$!
  for _ in $(seq 400); do [ -s "$tmp/srv/port" ] && break; sleep 0.05; done
  port=$(cat "$tmp/srv/port")
  curl -sf -XPOST "http://127.0.0.1:$port/v1/tables/ev.srv/events" -H 'Content-Type: application/x-ndjson' \
      --data-binary $'{"id":1}\n{"id":2,"n":null,"s":null}\n' >/dev/null || fail "serve: post"
  curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" >/dev/null || fail "serve: flush"
  kill -TERM "$spid"
  wait "$spid" || fail "serve: exit status $?"
  got=$("$floe" scan ev.srv --format canonical | LC_ALL=C sort | tr '\n' ' ')
  [ "$got" = '{"id":1,"n":7,"s":{"a":"A"}} {"id":2,"n":null,"s":null} ' ] || fail "serve: $got $(tail -3 "$tmp/srv/log")"
  [ "$fails" -eq "$before" ]
) || fails=$((fails + 1))

# ---- name mapping: authoritative once present ------------------------------------------
cat > "$tmp/nm.mjs" <<'EOF'
const [api, out] = process.argv.slice(2)
const { DuckDBInstance } = await import(api)
const c = await (await DuckDBInstance.create(':memory:')).connect()
await c.run(`COPY (SELECT i::INTEGER AS a, (i * 250)::BIGINT AS b FROM range(1, 4) t(i)) TO '${out}' (FORMAT parquet)`)
EOF
node "$tmp/nm.mjs" "$js/node_modules/@duckdb/node-api/lib/index.js" "$tmp/noids.parquet"
cat > "$tmp/nm.json" <<'EOF'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":true,"type":"int"},
 {"id":2,"name":"b","required":false,"type":"long"}]}
EOF
"$floe" table create ev.nm --schema "$tmp/nm.json" >/dev/null
"$floe" append ev.nm "$tmp/noids.parquet" >/dev/null
[ "$(rows ev.nm | tr '\n' ' ')" = '{"a":1,"b":250} {"a":2,"b":500} {"a":3,"b":750} ' ] || fail "mapping written by append"
evolve ev.nm "m['properties']['schema.name-mapping.default'] = '[{\"names\":[\"a\"],\"field-id\":1}]'" ev.nm1
[ "$(rows ev.nm1 | tr '\n' ' ')" = '{"a":1,"b":null} {"a":2,"b":null} {"a":3,"b":null} ' ] || fail "mapping without b: $(rows ev.nm1)"
evolve ev.nm "m['properties']['schema.name-mapping.default'] = '[]'" ev.nm2
[ "$(rows ev.nm2 | tr '\n' ' ')" = '{"a":null,"b":null} {"a":null,"b":null} {"a":null,"b":null} ' ] || fail "empty mapping: $(rows ev.nm2)"
evolve ev.nm "del m['properties']['schema.name-mapping.default']" ev.nm3
[ "$(rows ev.nm3 | tr '\n' ' ')" = '{"a":1,"b":250} {"a":2,"b":500} {"a":3,"b":750} ' ] || fail "no mapping (names): $(rows ev.nm3)"
# the rewrite follows the same mapping: b is dropped to null, a kept
"$floe" rewrite ev.nm1 --option rewrite-all=true --quiet || fail "rewrite ev.nm1"
[ "$(rows ev.nm1 | tr '\n' ' ')" = '{"a":1,"b":null} {"a":2,"b":null} {"a":3,"b":null} ' ] || fail "rewrite with a mapping without b: $(rows ev.nm1)"
# with `[]` the required column a has no value: the rewrite refuses instead of inventing one
set +e
"$floe" rewrite ev.nm2 --option rewrite-all=true --quiet > /dev/null 2> "$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] && grep -q "required field a" "$tmp/err" || fail "rewrite under an empty mapping: rc $rc $(cat "$tmp/err")"

[ $fails -eq 0 ] || { echo "table_evolution: $fails failures" >&2; exit 1; }
echo "table_evolution: ok"
