#!/usr/bin/env bash
# schema_depth_limit.sh - schema validation refuses what floe's Parquet writer and reader
# cannot take (FLOE_PQ_PATH_MAX: 64 names from a top-level field to a leaf, a list or map
# adding its repeated group), naming the field and the limit, at table create, schema
# evolution (add-column), convert --schema and schema show; a schema at the limit is taken
# and its records written and read back. Before: table create took 63 nested structs or
# 32 nested lists and every append then failed with "schema too deep for the writer".
set -euo pipefail
name=schema_depth_limit oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"

# gen KIND N: a schema of rid and c, c being N nested structs (KIND s) or lists (KIND l)
# around a long; and a record of that shape on stdout of `gen ... rec`
gen() {
  python3 - "$@" <<'PY'
import json, sys
kind, n, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
nid = [2]
def ty(k):
    nid[0] += 1
    if k == 0:
        return "long"
    if kind == "s":
        i = nid[0]
        return {"type": "struct", "fields": [{"id": i, "name": "f", "required": False, "type": ty(k - 1)}]}
    i = nid[0]
    return {"type": "list", "element-id": i, "element-required": False, "element": ty(k - 1)}
def val(k):
    if k == 0:
        return 7
    return {"f": val(k - 1)} if kind == "s" else [val(k - 1)]
if what == "schema":
    print(json.dumps({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "rid", "required": True, "type": "long"},
        {"id": 2, "name": "c", "required": False, "type": ty(n)}]}))
elif what == "col":
    print(json.dumps(ty(n)))
else:
    print(json.dumps({"rid": 1, "c": val(n)}))
PY
}
# expect_fail PATTERN CMD...: CMD exits 1 with PATTERN on stderr
expect_fail() {
  local pat=$1 rc; shift
  set +e
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set -e
  [ $rc -eq 1 ] || { fail "$* exited $rc, want 1: $(cat "$tmp/err")"; return; }
  grep -q -- "$pat" "$tmp/err" || fail "$*: stderr lacks '$pat': $(cat "$tmp/err")"
}

# at the limit: c and 63 fields f = 64 names; c + 31 lists: c,list,element,...,element = 63
for shape in "s 63" "l 31"; do
  set -- $shape
  gen "$1" "$2" schema > "$tmp/ok.json"
  gen "$1" "$2" rec > "$tmp/ok.ndjson"
  "$floe" schema show "$tmp/ok.json" >/dev/null || fail "show of $shape"
  "$floe" table create "ns.ok$1" --schema "$tmp/ok.json" >/dev/null || fail "create of $shape"
  "$floe" append "ns.ok$1" "$tmp/ok.ndjson" >/dev/null 2>"$tmp/err" || fail "append of $shape: $(cat "$tmp/err")"
  got=$("$floe" scan "ns.ok$1" | tr -d ' \n')
  want=$(tr -d ' \n' < "$tmp/ok.ndjson")
  [ "$got" = "$want" ] || fail "scan of $shape: $got, want $want"
  "$floe" convert --schema "$tmp/ok.json" "$tmp/ok.ndjson" -o "$tmp/cv$1" >/dev/null 2>"$tmp/err" ||
    fail "convert of $shape: $(cat "$tmp/err")"
done

# one past: refused everywhere, naming the field's path and the limit
for shape in "s 64" "l 32"; do
  set -- $shape
  gen "$1" "$2" schema > "$tmp/deep.json"
  gen "$1" "$2" rec > "$tmp/deep.ndjson"
  pat="deeper than 64"
  [ "$1" = s ] || pat="field 'c\..*more than the 64"
  expect_fail "$pat" "$floe" schema show "$tmp/deep.json"
  expect_fail "$pat" "$floe" table create "ns.deep$1" --schema "$tmp/deep.json"
  expect_fail "$pat" "$floe" convert --schema "$tmp/deep.json" "$tmp/deep.ndjson" -o "$tmp/dv$1"
  [ ! -e "$tmp/dv$1" ] || [ -z "$(find "$tmp/dv$1" -name '*.parquet')" ] || fail "convert of $shape wrote files"
done
# schema evolution: beside the deepest struct of the table at the limit, a long fits (64
# names) and a list<long> (66) does not
at=c$(printf '.f%.0s' $(seq 62))
"$floe" table schema ns.oks add-column "$at.g" long >/dev/null 2>"$tmp/err" || fail "add-column at the limit: $(cat "$tmp/err")"
expect_fail "field '$at\.h.*more than the 64" "$floe" table schema ns.oks add-column "$at.h" "list<long>"

[ "$fails" -eq 0 ] || exit 1
echo "$name: ok"
