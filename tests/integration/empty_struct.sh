#!/usr/bin/env bash
# empty_struct.sh - issue 24: a schema holding an empty struct (Iceberg allows struct<>;
# another engine may write one) cannot be written to Parquet, whose groups need a column
# (parquet-java, Arrow C++ and arrow-rs refuse it; DuckDB has no empty struct type). floe
# append, convert and rewrite refuse it before writing anything, naming the field, where
# they wrote files no reader could open.
set -euo pipefail
name=empty_struct oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

datafiles() { find "$tmp/wh" -name '*.parquet' | wc -l; }
# $1: what; $2: the field the error must name; the rest: the floe command (exit 1)
expect_refused() {
  local what=$1 field=$2; shift 2
  local rc=0
  "$floe" "$@" > out.txt 2> err.txt || rc=$?
  [ $rc = 1 ] || fail "$what: exit $rc, $(cat err.txt)"
  grep -qF "field '$field' is a struct with no fields" err.txt || fail "$what: $(cat err.txt)"
  [ "$(wc -l < err.txt)" = 1 ] || fail "$what: $(cat err.txt)"
}

python3 -c '
import json
print(json.dumps({"type": "struct", "fields": [
    {"id": 1, "name": "k", "required": False, "type": "string"},
    {"id": 2, "name": "s", "required": False, "type": {"type": "struct", "fields": [
        {"id": 3, "name": "a", "required": False, "type": "long"},
        {"id": 4, "name": "inner", "required": False, "type": {"type": "struct", "fields": []}}]}}]}))' > nested.json
python3 -c '
import json
print(json.dumps({"type": "struct", "fields": [
    {"id": 1, "name": "k", "required": False, "type": "string"},
    {"id": 2, "name": "l", "required": False, "type": {"type": "list", "element-id": 3,
        "element-required": False, "element": {"type": "struct", "fields": []}}}]}))' > inlist.json
printf '{"k":"a","s":{"a":1,"inner":{}}}\n{"k":"b"}\n' > in.ndjson

# -- convert: no folder, no file --------------------------------------------------------
expect_refused "convert (nested)" s.inner convert --schema nested.json -o conv in.ndjson
[ ! -e conv ] || fail "convert made $(ls -R conv)"
expect_refused "convert (list element)" l.element convert --schema inlist.json -o conv in.ndjson
[ ! -e conv ] || fail "convert made $(ls -R conv)"

# -- append into a table whose schema has one: nothing written, nothing committed --------
"$floe" table create ns.e --schema nested.json >/dev/null
expect_refused "append" s.inner append ns.e in.ndjson
[ "$(datafiles)" = 0 ] || fail "append wrote $(find "$tmp/wh" -name '*.parquet')"
[ "$("$floe" snapshots ns.e --json)" = "[]" ] || fail "append committed: $("$floe" snapshots ns.e)"

# -- rewrite of a table another engine gave an empty struct after its data -------------
"$floe" table create ns.r --schema s.json >/dev/null
printf '{"k":"a","v":1}\n' > r.ndjson
"$floe" append ns.r r.ndjson >/dev/null
"$floe" append ns.r r.ndjson >/dev/null
# as PyIceberg would commit it: a new metadata file with the schema, the catalog row moved
python3 - "$(meta ns.r)" "$FLOE_CATALOG_URI" <<'EOF'
import json, sqlite3, sys, os
cur = sys.argv[1]
m = json.load(open(cur))
s = json.loads(json.dumps([x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]))
s["schema-id"] = max(x["schema-id"] for x in m["schemas"]) + 1
s["fields"].append({"id": m["last-column-id"] + 1, "name": "e", "required": False,
                    "type": {"type": "struct", "fields": []}})
m["schemas"].append(s)
m["current-schema-id"] = s["schema-id"]
m["last-column-id"] += 1
new = os.path.join(os.path.dirname(cur), "99999-other-engine.metadata.json")
json.dump(m, open(new, "w"))
db = sqlite3.connect(sys.argv[2])
db.execute("UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
           "WHERE table_namespace = 'ns' AND table_name = 'r'", ("file://" + new, "file://" + cur))
db.commit()
EOF
before=$(datafiles)
"$floe" table schema ns.r | grep -q ' e: struct' || fail "the other engine's schema: $("$floe" table schema ns.r)"
expect_refused "rewrite" e rewrite ns.r --option min-input-files=1
expect_refused "append (after the schema change)" e append ns.r r.ndjson
[ "$(datafiles)" = "$before" ] || fail "rewrite or append wrote files"
[ "$("$floe" snapshots ns.r --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2 ] ||
  fail "a snapshot was committed: $("$floe" snapshots ns.r)"
"$floe" scan ns.r --limit 5 > out.txt || fail "scan of the table after the refusals"

[ $fails = 0 ] || exit 1
echo "$name: ok"
