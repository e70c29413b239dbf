#!/usr/bin/env bash
# rewrite_dv_partial.sh - on a format v3 table, `floe delete` writes the deletion vectors
# of every data file it touches into one Puffin file (one manifest entry per vector, told
# apart by content_offset). A rewrite that replaces only some of those data files removes
# only their vectors: the others stay live and their rows stay deleted (adversary finding
# on issue 24: every entry of the Puffin file was removed by its path, and the deleted
# rows of the files left in place came back). Partitioned (the rewrite picks one
# partition) and unpartitioned with --where; row sets compared after each step.
name=rewrite_dv_partial
oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"

echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"k","required":false,"type":"int"}]}' > "$tmp/k.json"
python3 -c "import json; [print(json.dumps({'id':i,'k':i%10})) for i in range(200)]" > "$tmp/a.ndjson"
python3 -c "import json; [print(json.dumps({'id':i,'k':i%10})) for i in range(200,400)]" > "$tmp/b.ndjson"
# ids LABEL TABLE WANT: the table's ids are those of python range expression WANT
ids() {
  local got want
  got=$("$floe" scan "$2" | python3 -c 'import json,sys; print(sorted(json.loads(l)["id"] for l in sys.stdin))') ||
    { fail "$1: scan"; return; }
  want=$(python3 -c "print(sorted($3))")
  [ "$got" = "$want" ] || fail "$1: ids differ: $(python3 -c "import sys; g=set(eval(sys.argv[1])); w=set(eval(sys.argv[2])); print('extra', sorted(g-w)[:10], 'missing', sorted(w-g)[:10])" "$got" "$want")"
}

"$floe" table create ns.p --schema "$tmp/k.json" --partition "truncate(100, id)" --property format-version=3 >/dev/null
"$floe" append ns.p "$tmp/a.ndjson" >/dev/null
"$floe" delete ns.p --where "id < 50 OR id = 150" >/dev/null || fail "delete ns.p"
keep_p="[i for i in range(200) if not (i < 50 or i == 150)]"
ids "partitioned, after delete" ns.p "$keep_p"
"$floe" rewrite ns.p > "$tmp/rw1.out" 2>&1 || fail "rewrite ns.p: $(tail -3 "$tmp/rw1.out")"
ids "partitioned, after a rewrite of one partition" ns.p "$keep_p"
[ "$("$floe" scan ns.p --where "id = 150" | wc -l)" = 0 ] || fail "id 150 is back"

"$floe" table create ns.u --schema "$tmp/k.json" --property format-version=3 >/dev/null
"$floe" append ns.u "$tmp/a.ndjson" >/dev/null
"$floe" append ns.u "$tmp/b.ndjson" >/dev/null
"$floe" delete ns.u --where "id < 100 OR id = 300" >/dev/null || fail "delete ns.u"
keep_u="[i for i in range(400) if not (i < 100 or i == 300)]"
ids "unpartitioned, after delete" ns.u "$keep_u"
"$floe" rewrite ns.u -o rewrite-all=true --where "id < 200" > "$tmp/rw2.out" 2>&1 ||
  fail "rewrite ns.u --where: $(tail -3 "$tmp/rw2.out")"
ids "unpartitioned, after a rewrite of one file" ns.u "$keep_u"
# a full rewrite afterwards applies and drops the remaining vector
"$floe" rewrite ns.u -o rewrite-all=true > "$tmp/rw3.out" 2>&1 || fail "rewrite ns.u: $(tail -3 "$tmp/rw3.out")"
ids "unpartitioned, after a full rewrite" ns.u "$keep_u"
[ "$fails" = 0 ] || exit 1
echo "rewrite_dv_partial: ok"
