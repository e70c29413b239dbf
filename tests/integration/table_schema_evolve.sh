#!/usr/bin/env bash
# table_schema_evolve.sh - `floe table schema` and `floe table partition`: schema and
# partition spec evolution as catalog commits (format/spec.md "Schema Evolution",
# "Partition Evolution"), checked by the metadata file they commit (read here as JSON,
# not through floe) and by what floe scan then reads from files written before and after:
#   - add-column at the top level, inside a struct, a list's element struct and a map's
#     value struct, with nested types: new field ids from last-column-id in the spec's
#     order, a new schema-id made current each time; rename, widen (int->long,
#     float->double, decimal precision), make-optional, move-column, drop-column,
#     set-identifier-fields; the same change again commits nothing;
#   - refusals with exit 1 and a message naming the rule (required column without a
#     default, narrowing, dropping an identifier field or the current spec's source
#     column, a duplicate name), usage errors with exit 2, the metadata untouched;
#   - floe scan of the files written before the changes gives the rows the spec says
#     (added columns null, renamed ones by field id, widened values, dropped ones gone),
#     beside rows appended after them; two concurrent add-columns both land;
#   - partition spec: add-field / drop-field / replace make new specs with the spec's
#     field ids (last-partition-id, v2 reuse of an equivalent field's id, an equal spec's
#     id reused); each file keeps the spec it was written with; scan with pruning equals
#     --no-prune and skips files; icebird (an independent reader) reads the table with
#     files in three specs to the same rows; a v1 table keeps a dropped field as void;
#   - every change takes a path that leaves out a list's element or a map's value;
#   - v3 types (timestamp_ns, ...) refused in a v2 table, taken by a v3 one;
#   - a tag is read with the schema its snapshot was written with (as --snapshot), a
#     branch with the table's current one;
#   - describe shows the schema and spec ids (text and JSON); floe schema show NS.NAME
#     shows the current schema.
set -euo pipefail
name=table_schema_evolve oracle=icebird
. "$(dirname "$0")/lib/table_cli_common.sh"

# rows of a scan, sorted, as python literals: scan_rows TABLE [scan args...]
scan_rows() {
  local t=$1; shift
  "$floe" scan "$t" "$@" | python3 -c 'import json,sys; print(sorted((json.loads(l) for l in sys.stdin if l.strip()), key=lambda r: json.dumps(r, sort_keys=True)))'
}
# expect_fail CODE PATTERN CMD...: CMD exits CODE with PATTERN on stderr
expect_fail() {
  local code=$1 pat=$2 rc; shift 2
  set +e
  "$@" > /dev/null 2> "$tmp/ef.err"; rc=$?
  set -e
  [ "$rc" = "$code" ] && grep -q -- "$pat" "$tmp/ef.err" || fail "${*:2}: exit $rc (want $code), stderr: $(cat "$tmp/ef.err")"
}

cat > "$tmp/ev.json" <<'EOF'
{"type":"struct","fields":[
 {"id":1,"name":"id","required":true,"type":"int"},
 {"id":2,"name":"k","required":false,"type":"string"},
 {"id":3,"name":"payload","required":false,"type":{"type":"struct","fields":[
   {"id":4,"name":"geo","required":false,"type":{"type":"struct","fields":[
     {"id":5,"name":"city","required":false,"type":"string"}]}}]}},
 {"id":6,"name":"items","required":false,"type":{"type":"list","element-id":7,"element-required":false,
   "element":{"type":"struct","fields":[{"id":8,"name":"sku","required":false,"type":"string"}]}}},
 {"id":9,"name":"attrs","required":false,"type":{"type":"map","key-id":10,"key":"string","value-id":11,
   "value-required":false,"value":{"type":"struct","fields":[{"id":12,"name":"n","required":false,"type":"long"}]}}},
 {"id":13,"name":"price","required":false,"type":"decimal(9, 2)"},
 {"id":14,"name":"f","required":false,"type":"float"},
 {"id":15,"name":"junk","required":false,"type":"string"},
 {"id":16,"name":"ts","required":false,"type":"timestamptz"}]}
EOF
"$floe" table create ns.ev --schema "$tmp/ev.json" --partition k >/dev/null
cat > "$tmp/a.ndjson" <<'EOF'
{"id":1,"k":"a","payload":{"geo":{"city":"Oslo"}},"items":[{"sku":"s1"}],"attrs":{"x":{"n":1}},"price":1.25,"f":1.5,"junk":"j1","ts":"2026-01-01T01:00:00Z"}
{"id":2,"k":"b","price":2.5,"f":2.5,"junk":"j2","ts":"2026-01-02T01:00:00Z"}
EOF
"$floe" append ns.ev "$tmp/a.ndjson" >/dev/null

# ---- schema changes ---------------------------------------------------------------------
"$floe" table schema ns.ev add-column payload.geo.lat double --doc latitude --json > "$tmp/s1.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["changed"] is True and d["schema_id"]==1 and d["last_column_id"]==17, d' "$tmp/s1.json" ||
  fail "add-column --json: $(cat "$tmp/s1.json")"
[ "$(mq ns.ev 'm["current-schema-id"], m["last-column-id"], len(m["schemas"])')" = "(1, 17, 2)" ] ||
  fail "add-column: metadata $(mq ns.ev 'm["current-schema-id"], m["last-column-id"]')"
# the field as the metadata has it, found by path: py expression over f
field() { mq ns.ev "(lambda s: (lambda walk: walk(walk, s['fields'], '$1'.split('.')))(lambda w, fs, p: (lambda f: f if len(p) == 1 else w(w, (lambda t: t['fields'] if t['type'] == 'struct' else [dict(id=t['element-id'], name='element', type=t['element'])] if t['type'] == 'list' else [dict(id=t['key-id'], name='key', type=t['key']), dict(id=t['value-id'], name='value', type=t['value'])])(f['type']), p[1:]))(next(x for x in fs if x['name'] == p[0]))))([s for s in m['schemas'] if s['schema-id'] == m['current-schema-id']][0])${2:-}"; }
[ "$(field payload.geo.lat)" = "{'id': 17, 'name': 'lat', 'required': False, 'type': 'double', 'doc': 'latitude'}" ] ||
  fail "payload.geo.lat: $(field payload.geo.lat)"
"$floe" table schema ns.ev add-column items.qty int >/dev/null          # the list's element struct
"$floe" table schema ns.ev add-column attrs.value.tag string >/dev/null # the map's value struct
"$floe" table schema ns.ev add-column extra 'struct<a: int, b: list<string>, c: map<string, long>>' >/dev/null
[ "$(field items.element.qty "['id']") $(field attrs.value.tag "['id']")" = "18 19" ] ||
  fail "ids of items.element.qty, attrs.value.tag: $(field items.element.qty) $(field attrs.value.tag)"
# extra 20; its fields 21-23 first, then b's element 24, c's key and value 25, 26
[ "$(mq ns.ev '[s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"][-1]')" = \
  "{'id': 20, 'name': 'extra', 'required': False, 'type': {'type': 'struct', 'fields': [{'id': 21, 'name': 'a', 'required': False, 'type': 'int'}, {'id': 22, 'name': 'b', 'required': False, 'type': {'type': 'list', 'element-id': 24, 'element': 'string', 'element-required': False}}, {'id': 23, 'name': 'c', 'required': False, 'type': {'type': 'map', 'key-id': 25, 'key': 'string', 'value-id': 26, 'value': 'long', 'value-required': False}}]}}" ] ||
  fail "extra: $(mq ns.ev '[s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"][-1]')"
"$floe" table schema ns.ev rename-column k kind >/dev/null
"$floe" table schema ns.ev rename-column payload.geo.city town >/dev/null
"$floe" table schema ns.ev widen id long >/dev/null
"$floe" table schema ns.ev widen f double >/dev/null
"$floe" table schema ns.ev widen price 'decimal(12, 2)' >/dev/null
"$floe" table schema ns.ev drop-column junk >/dev/null
"$floe" table schema ns.ev move-column ts first >/dev/null
"$floe" table schema ns.ev move-column price before kind >/dev/null
"$floe" table schema ns.ev set-identifier-fields id >/dev/null
[ "$(mq ns.ev 'm["current-schema-id"], m["last-column-id"], len(m["schemas"])')" = "(13, 26, 14)" ] ||
  fail "after 13 changes: $(mq ns.ev 'm["current-schema-id"], m["last-column-id"], len(m["schemas"])')"
[ "$(mq ns.ev '[(f["id"], f["name"], f["type"] if isinstance(f["type"], str) else f["type"]["type"]) for f in [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"]]')" = \
  "[(16, 'ts', 'timestamptz'), (1, 'id', 'long'), (13, 'price', 'decimal(12, 2)'), (2, 'kind', 'string'), (3, 'payload', 'struct'), (6, 'items', 'list'), (9, 'attrs', 'map'), (14, 'f', 'double'), (20, 'extra', 'struct')]" ] ||
  fail "fields: $(mq ns.ev '[(f["id"], f["name"]) for f in [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"]]')"
[ "$(mq ns.ev '[s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["identifier-field-ids"]')" = "[1]" ] ||
  fail "identifier-field-ids"

# the same change again: nothing committed
loc=$(meta ns.ev)
"$floe" table schema ns.ev widen id long --json | grep -q '"changed":false' || fail "a widen to the same type reported a change"
"$floe" table schema ns.ev make-optional payload >/dev/null
[ "$(meta ns.ev)" = "$loc" ] || fail "a change that changes nothing committed"

# refusals: exit 1 naming the rule, usage errors exit 2; nothing committed
expect_fail 1 'required column needs an initial default' "$floe" table schema ns.ev add-column r long --required
expect_fail 1 'long to int is not a promotion' "$floe" table schema ns.ev widen id int
expect_fail 1 'double to float is not a promotion' "$floe" table schema ns.ev widen f float
expect_fail 1 'decimal(12, 2) to decimal(10, 2) is not a promotion' "$floe" table schema ns.ev widen price 'decimal(10, 2)'
expect_fail 1 'id is an identifier field' "$floe" table schema ns.ev drop-column id
expect_fail 1 'identifier field, which must be required' "$floe" table schema ns.ev make-optional id
expect_fail 1 'kind is the source of partition field k' "$floe" table schema ns.ev drop-column kind
expect_fail 1 'kind already exists' "$floe" table schema ns.ev add-column kind string
expect_fail 1 'a column f is already beside it' "$floe" table schema ns.ev rename-column kind f
expect_fail 2 'no column nosuch' "$floe" table schema ns.ev drop-column nosuch
expect_fail 2 'unknown or unsupported type "lng"' "$floe" table schema ns.ev add-column z lng
expect_fail 1 'it is optional' "$floe" table schema ns.ev set-identifier-fields kind
expect_fail 2 'the changes are add-column' "$floe" table schema ns.ev recolor id
expect_fail 2 'add-column wants PATH TYPE' "$floe" table schema ns.ev add-column z
expect_fail 2 'move-column PATH first|before X|after X' "$floe" table schema ns.ev move-column id sideways
expect_fail 2 'unknown option --nope' "$floe" table schema ns.ev drop-column id --nope
out=$("$floe" table schema ns.ev widen id int --json 2>/dev/null || true)
echo "$out" | grep -q '"error":{"code":"INVALID"' || fail "--json refusal: $out"
[ "$(meta ns.ev)" = "$loc" ] || fail "a refused change committed"

# rows after the changes: old files read by field id, new rows beside them
cat > "$tmp/b.ndjson" <<'EOF'
{"ts":"2026-01-03T01:00:00Z","id":5000000000,"price":"123456789.01","kind":"a","payload":{"geo":{"town":"Rome","lat":41.9}},"items":[{"sku":"s3","qty":2}],"attrs":{"y":{"n":2,"tag":"t"}},"f":0.1,"extra":{"a":7,"b":["p"],"c":{"q":1}}}
EOF
"$floe" append ns.ev "$tmp/b.ndjson" >/dev/null
want="[{'ts': '2026-01-02T01:00:00.000000Z', 'id': 2, 'price': '2.50', 'kind': 'b', 'payload': None, 'items': None, 'attrs': None, 'f': 2.5, 'extra': None}, {'ts': '2026-01-01T01:00:00.000000Z', 'id': 1, 'price': '1.25', 'kind': 'a', 'payload': {'geo': {'town': 'Oslo', 'lat': None}}, 'items': [{'sku': 's1', 'qty': None}], 'attrs': {'x': {'n': 1, 'tag': None}}, 'f': 1.5, 'extra': None}, {'ts': '2026-01-03T01:00:00.000000Z', 'id': 5000000000, 'price': '123456789.01', 'kind': 'a', 'payload': {'geo': {'town': 'Rome', 'lat': 41.9}}, 'items': [{'sku': 's3', 'qty': 2}], 'attrs': {'y': {'n': 2, 'tag': 't'}}, 'f': 0.1, 'extra': {'a': 7, 'b': ['p'], 'c': {'q': 1}}}]"
got=$(scan_rows ns.ev)
[ "$got" = "$want" ] || fail "scan after evolution:
 got  $got
 want $want"
[ "$("$floe" scan ns.ev --where "kind = 'b'" | python3 -c 'import json,sys; print([json.loads(l)["id"] for l in sys.stdin])')" = "[2]" ] ||
  fail "scan --where on the renamed partition source"
[ "$("$floe" scan ns.ev --where "id > 3000000000" | python3 -c 'import json,sys; print([json.loads(l)["id"] for l in sys.stdin])')" = "[5000000000]" ] ||
  fail "scan --where on the widened column"

# two writers at once: both columns land (commit retry on conflict)
"$floe" table schema ns.ev add-column c1 int >/dev/null 2>"$tmp/c1.err" & p1=$!
"$floe" table schema ns.ev add-column c2 int >/dev/null 2>"$tmp/c2.err" & p2=$!
wait $p1 || fail "concurrent add-column c1: $(cat "$tmp/c1.err")"
wait $p2 || fail "concurrent add-column c2: $(cat "$tmp/c2.err")"
[ "$(mq ns.ev 'sorted((f["name"], f["id"]) for f in [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"] if f["name"] in ("c1", "c2"))' | tr -d "'")" != "[]" ] &&
  [ "$(mq ns.ev 'sorted(f["id"] for f in [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"] if f["name"] in ("c1", "c2"))')" = "[27, 28]" ] ||
  fail "concurrent add-columns: $(mq ns.ev '[f["name"] for f in [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"]]')"

# the table's schema shown: text tree and JSON
"$floe" table schema ns.ev > "$tmp/show.txt"
grep -q '^ns.ev: schema 15 (last column id 28)$' "$tmp/show.txt" && grep -qE '^  17 +  +lat: double  -- latitude$' "$tmp/show.txt" &&
  grep -q '^identifier fields: id$' "$tmp/show.txt" || fail "schema text: $(cat "$tmp/show.txt")"

# floe schema show takes a catalog table too (its current schema)
[ "$("$floe" schema show ns.ev --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["schema-id"], d["identifier-field-ids"], d["fields"][0]["name"])')" = "15 [1] ts" ] ||
  fail "floe schema show NS.NAME: $("$floe" schema show ns.ev --json 2>&1 | head -c 300)"
expect_fail 1 'no such file, nor a table' "$floe" schema show ns.nosuch

# ---- partition spec evolution -------------------------------------------------------------
"$floe" table create ns.pe --schema "$tmp/s.json" --partition k >/dev/null
gen() { python3 -c '
import sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
for i in range(lo, hi): print("{\"k\":\"%s\",\"v\":%d}" % ("abcd"[i % 4], i))' "$1" "$2"; }
gen 0 40 > "$tmp/p0.ndjson"; "$floe" append ns.pe "$tmp/p0.ndjson" >/dev/null
"$floe" table partition ns.pe add-field 'bucket(4, v)' --json > "$tmp/pa.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["changed"] and d["spec_id"]==1 and d["last_partition_id"]==1001 and d["partition_spec"]=="k, bucket(4, v)", d' "$tmp/pa.json" ||
  fail "add-field --json: $(cat "$tmp/pa.json")"
gen 40 80 > "$tmp/p1.ndjson"; "$floe" append ns.pe "$tmp/p1.ndjson" >/dev/null
"$floe" table partition ns.pe drop-field k >/dev/null
"$floe" table partition ns.pe add-field 'truncate(10, v) AS v10' >/dev/null
gen 80 120 > "$tmp/p2.ndjson"; "$floe" append ns.pe "$tmp/p2.ndjson" >/dev/null
[ "$(mq ns.pe 'm["default-spec-id"], m["last-partition-id"], [[(f["field-id"], f["name"], f["transform"]) for f in s["fields"]] for s in m["partition-specs"]]')" = \
  "(3, 1002, [[(1000, 'k', 'identity')], [(1000, 'k', 'identity'), (1001, 'v_bucket', 'bucket[4]')], [(1001, 'v_bucket', 'bucket[4]')], [(1001, 'v_bucket', 'bucket[4]'), (1002, 'v10', 'truncate[10]')]])" ] ||
  fail "specs: $(mq ns.pe 'm["default-spec-id"], m["last-partition-id"], m["partition-specs"]')"
[ "$("$floe" files ns.pe --json | python3 -c 'import json,sys; print(sorted({f["spec_id"] for f in json.load(sys.stdin)}))')" = "[0, 1, 3]" ] ||
  fail "files' specs: $("$floe" files ns.pe --json)"
# pruning across specs: equal to --no-prune, and some files skipped
for w in "k = 'b'" "v = 57" "v >= 100" "k = 'a' AND v < 50" "v IN (3, 77, 101)"; do
  a=$(scan_rows ns.pe --where "$w"); b=$(scan_rows ns.pe --where "$w" --no-prune)
  [ "$a" = "$b" ] || fail "--where $w: pruned $a, --no-prune $b"
  n=$(python3 -c 'import ast,sys; print(len(ast.literal_eval(sys.argv[1])))' "$a")
  e=$(python3 -c '
import sys
w = sys.argv[1].replace("=", "==").replace(">==", ">=").replace("<==", "<=").replace(" AND ", " and ").replace(" IN ", " in ")
print(sum(1 for i in range(120) if eval(w, {"k": "abcd"[i % 4], "v": i})))' "$w")
  [ "$n" = "$e" ] || fail "--where $w: $n rows, want $e"
done
"$floe" scan ns.pe --where 'v = 57' --stats 2> "$tmp/st.json" >/dev/null
python3 -c '
import json,sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
d = d.get("scan", d)
assert d["files_skipped_partition"] + d.get("manifests_skipped", 0) > 0, d' "$tmp/st.json" ||
  fail "v = 57 pruned nothing: $(cat "$tmp/st.json")"
# icebird reads the three specs' files to the same rows
(cd "$js" && node icebird_read.mjs --metadata "$(meta ns.pe)") | python3 -c 'import json,sys; print(sorted((json.loads(l) for l in sys.stdin if l.strip()), key=lambda r: json.dumps(r, sort_keys=True)))' > "$tmp/ice.txt" ||
  fail "icebird could not read the table"
[ "$(cat "$tmp/ice.txt")" = "$(scan_rows ns.pe)" ] || fail "icebird and floe scan differ"
# re-adding k gets its old field id back (v2); replacing with an existing spec reuses its id
"$floe" table partition ns.pe replace 'k, bucket(4, v)' --json > "$tmp/pr.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["spec_id"]==1 and d["changed"], d' "$tmp/pr.json" ||
  fail "replace with spec 1's fields: $(cat "$tmp/pr.json")"
[ "$(mq ns.pe 'len(m["partition-specs"]), m["default-spec-id"]')" = "(4, 1)" ] || fail "replace added a spec"
loc=$(meta ns.pe)
expect_fail 1 'already has a partition field named k' "$floe" table partition ns.pe add-field k
expect_fail 1 'redundant with partition field k' "$floe" table partition ns.pe add-field 'identity(k) AS k2'
expect_fail 1 'the spec already has a partition field named v_bucket' "$floe" table partition ns.pe add-field 'bucket(8, v) AS v_bucket'
expect_fail 1 'no partition field nosuch' "$floe" table partition ns.pe drop-field nosuch
expect_fail 2 'day' "$floe" table partition ns.pe add-field 'day(k)'
expect_fail 2 'one argument' "$floe" table partition ns.pe add-field k v
expect_fail 2 'the changes are add-field' "$floe" table partition ns.pe move k
[ "$(meta ns.pe)" = "$loc" ] || fail "a refused partition change committed"
"$floe" table partition ns.pe replace '' >/dev/null
"$floe" table partition ns.pe | grep -q '^ns.pe: partition spec 4: (unpartitioned)$' || fail "unpartitioned: $("$floe" table partition ns.pe)"
gen 120 130 > "$tmp/p3.ndjson"; "$floe" append ns.pe "$tmp/p3.ndjson" >/dev/null
[ "$(scan_rows ns.pe --where 'v >= 5' | python3 -c 'import ast,sys; print(len(ast.literal_eval(sys.stdin.read())))')" = 125 ] ||
  fail "rows over four specs"

# describe: schema id and spec id, text and JSON
"$floe" table describe ns.pe | grep -q '^partitioned by: (unpartitioned) (spec 4)$' || fail "describe text: $("$floe" table describe ns.pe | grep partitioned)"
"$floe" table describe ns.ev | grep -q '^columns (schema 15):$' || fail "describe text schema id"
[ "$("$floe" table describe ns.pe --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["schema_id"], d["spec_id"])')" = "0 4" ] ||
  fail "describe --json ids"

# ---- a tag is read with its snapshot's schema, a branch with the table's -----------------
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"n","required":false,"type":"int"}]}' > "$tmp/tag.json"
"$floe" table create ns.tag --schema "$tmp/tag.json" >/dev/null
echo '{"id":1,"n":10}' > "$tmp/tag.ndjson"; "$floe" append ns.tag "$tmp/tag.ndjson" >/dev/null
"$floe" ref create ns.tag v1 --tag >/dev/null
"$floe" ref create ns.tag b1 >/dev/null
"$floe" table schema ns.tag drop-column n >/dev/null
"$floe" table schema ns.tag add-column n long >/dev/null
"$floe" table schema ns.tag rename-column id ident >/dev/null
"$floe" table schema ns.tag add-column id string >/dev/null
tag_snap=$(mq ns.tag 'm["refs"]["v1"]["snapshot-id"]')
[ "$(scan_rows ns.tag --ref v1)" = "[{'id': 1, 'n': 10}]" ] || fail "tag read: $(scan_rows ns.tag --ref v1)"
[ "$(scan_rows ns.tag --ref v1)" = "$(scan_rows ns.tag --snapshot "$tag_snap")" ] || fail "tag read != snapshot read"
[ "$(scan_rows ns.tag --ref b1)" = "[{'ident': 1, 'n': None, 'id': None}]" ] || fail "branch read: $(scan_rows ns.tag --ref b1)"

# ---- a path may leave out a list's element and a map's value in every change ------------
cat > "$tmp/short.json" <<'EOF'
{"type":"struct","fields":[
 {"id":1,"name":"items","required":false,"type":{"type":"list","element-id":2,"element-required":false,
   "element":{"type":"struct","fields":[{"id":3,"name":"a","required":false,"type":"int"}]}}},
 {"id":4,"name":"m","required":false,"type":{"type":"map","key-id":5,"key":"string","value-id":6,
   "value-required":false,"value":{"type":"struct","fields":[{"id":7,"name":"n","required":false,"type":"float"}]}}}]}
EOF
"$floe" table create ns.short --schema "$tmp/short.json" >/dev/null
"$floe" table schema ns.short add-column items.b string >/dev/null
"$floe" table schema ns.short widen items.a long >/dev/null
"$floe" table schema ns.short rename-column items.b c >/dev/null
"$floe" table schema ns.short move-column items.c before items.a >/dev/null
"$floe" table schema ns.short add-column m.x string >/dev/null
"$floe" table schema ns.short widen m.n double >/dev/null
"$floe" table schema ns.short drop-column m.value.x >/dev/null
cur='next(s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"])["fields"]'
[ "$(mq ns.short "[(f['name'], f['type']) for f in $cur[0]['type']['element']['fields']]")" = \
  "[('c', 'string'), ('a', 'long')]" ] || fail "list shorthand: $(mq ns.short "$cur")"
[ "$(mq ns.short "[(f['name'], f['type']) for f in $cur[1]['type']['value']['fields']]")" = \
  "[('n', 'double')]" ] || fail "map shorthand: $(mq ns.short "$cur")"
# the last field of a struct stays (a Parquet group without fields is refused by engines)
loc_short=$(meta ns.short)
expect_fail 1 'is the only field of struct m.value' "$floe" table schema ns.short drop-column m.n
[ "$(meta ns.short)" = "$loc_short" ] || fail "dropping a struct's last field committed"

# ---- format v3 types need a v3 table ----------------------------------------------------
loc_tag=$(meta ns.tag)
expect_fail 1 'needs format version 3' "$floe" table schema ns.tag add-column tn timestamp_ns
[ "$(meta ns.tag)" = "$loc_tag" ] || fail "a v3 type was committed to a v2 table"
echo '{"type":"struct","fields":[{"id":1,"name":"t","required":false,"type":"timestamptz_ns"}]}' > "$tmp/ns.json"
expect_fail 1 'needs format version 3' "$floe" table create ns.nsv2 --schema "$tmp/ns.json"
"$floe" table create ns.nsv3 --schema "$tmp/ns.json" --property format-version=3 >/dev/null
[ "$(mq ns.nsv3 'm["format-version"]')" = 3 ] || fail "v3 table with timestamptz_ns"

# ---- a format v1 table: a dropped field becomes void ------------------------------------
mkdir -p "$tmp/wh/ns/v1/metadata"  # inside the warehouse: a REST catalog registers only there
python3 - "$tmp/wh/ns/v1" "$tmp/s.json" <<'EOF'
import json, sys
loc, schema = sys.argv[1], json.load(open(sys.argv[2]))
schema["schema-id"] = 0
json.dump({"format-version": 1, "table-uuid": "5f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b",
           "location": "file://" + loc, "last-updated-ms": 1700000000000, "last-column-id": 2,
           "schema": schema, "partition-spec": [{"source-id": 1, "transform": "identity",
           "name": "k", "field-id": 1000}], "properties": {}, "snapshots": []},
          open(loc + "/metadata/v1.metadata.json", "w"))
EOF
"$floe" table register ns.v1 "$tmp/wh/ns/v1/metadata/v1.metadata.json" >/dev/null
gen 0 20 > "$tmp/v0.ndjson"; "$floe" append ns.v1 "$tmp/v0.ndjson" >/dev/null
"$floe" table partition ns.v1 add-field 'truncate(5, v)' >/dev/null
"$floe" table partition ns.v1 drop-field k >/dev/null
gen 20 40 > "$tmp/v1.ndjson"; "$floe" append ns.v1 "$tmp/v1.ndjson" >/dev/null
[ "$(mq ns.v1 'm["format-version"], m["default-spec-id"], m["partition-spec"], m["last-partition-id"]')" = \
  "(1, 2, [{'source-id': 1, 'transform': 'void', 'name': 'k', 'field-id': 1000}, {'source-id': 2, 'transform': 'truncate[5]', 'name': 'v_trunc', 'field-id': 1001}], 1001)" ] ||
  fail "v1 spec: $(mq ns.v1 'm["format-version"], m["default-spec-id"], m["partition-spec"]')"
expect_fail 1 'void ones, which still name their source' "$floe" table schema ns.v1 drop-column k
for w in "k = 'c'" "v = 33" "v < 7"; do
  [ "$(scan_rows ns.v1 --where "$w")" = "$(scan_rows ns.v1 --where "$w" --no-prune)" ] || fail "v1 --where $w: pruned differs"
done
[ "$(scan_rows ns.v1 | python3 -c 'import ast,sys; print(len(ast.literal_eval(sys.stdin.read())))')" = 40 ] || fail "v1 rows"

[ $fails = 0 ] || exit 1
echo "table_schema_evolve: ok"
