#!/usr/bin/env bash
# schema_quoted_path.sh - issue 24, adversary finding adv24d 8: `floe table schema`'s PATH
# takes the --where language's quoting (one parser, src/common/filter.c): `a.b` or "a.b"
# is a top-level column named a.b, a.b is field b of struct a, `a.b`.c a field of a
# struct named a.b, a doubled quote stands for itself. A column named a.b could not be
# renamed, dropped, widened, moved or made optional ("no column `a.b` in the schema"), and
# add-column '`x.y`' looked for a struct named `x. A path that does not parse is a usage
# error (exit 2) naming where; bare names still run to the next dot (spaces need no
# quotes).
set -euo pipefail
name=schema_quoted_path oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

cat > q.json <<'JSON'
{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"a.b","required":false,"type":"int"},
 {"id":3,"name":"a","required":true,"type":{"type":"struct","fields":[
   {"id":4,"name":"b","required":false,"type":"string"},{"id":5,"name":"c","required":false,"type":"long"}]}},
 {"id":6,"name":"s.t","required":false,"type":{"type":"struct","fields":[
   {"id":7,"name":"u","required":false,"type":"long"},{"id":8,"name":"v","required":false,"type":"long"}]}},
 {"id":9,"name":"my col","required":false,"type":"long"},
 {"id":10,"name":"q`x","required":false,"type":"long"}]}
JSON
"$floe" table create ns.q --schema q.json >/dev/null
# name of field ID in the current schema, and its type
field() { "$floe" table schema ns.q --json | python3 -c '
import json,sys
def walk(fs):
    for f in fs:
        yield f
        t=f["type"]
        if isinstance(t,dict) and t.get("type")=="struct": yield from walk(t["fields"])
s=json.load(sys.stdin)["schema"]
f=[f for f in walk(s["fields"]) if f["id"]==int(sys.argv[1])]
print(f[0]["name"]+":"+(f[0]["type"] if isinstance(f[0]["type"],str) else f[0]["type"]["type"])+(":req" if f[0]["required"] else ":opt") if f else "-")' "$1"; }
top() { "$floe" table schema ns.q --json | python3 -c 'import json,sys; print(",".join(f["name"] for f in json.load(sys.stdin)["schema"]["fields"]))'; }
ok() { "$floe" table schema ns.q "$@" >/dev/null 2>err.txt || fail "schema $*: $(cat err.txt)"; }

ok widen '`a.b`' long
[ "$(field 2)" = "a.b:long:opt" ] || fail "widen \`a.b\`: $(field 2)"
ok make-optional '"a"'
[ "$(field 3)" = "a:struct:opt" ] || fail "make-optional \"a\": $(field 3)"
ok move-column '`a.b`' first
[ "$(top)" = 'a.b,id,a,s.t,my col,q`x' ] || fail "move-column \`a.b\` first: $(top)"
ok move-column id before '`a.b`'
[ "$(top)" = 'id,a.b,a,s.t,my col,q`x' ] || fail "move-column id before \`a.b\`: $(top)"
ok rename-column '`s.t`.u' uu
[ "$(field 7)" = "uu:long:opt" ] || fail "rename \`s.t\`.u: $(field 7)"
ok move-column '`s.t`.v' before '"uu"'
ok add-column '`x.y`' string
[ "$("$floe" table schema ns.q --json | python3 -c 'import json,sys; print([f["name"] for f in json.load(sys.stdin)["schema"]["fields"]][-1])')" = "x.y" ] ||
  fail "add-column \`x.y\`: $(top)"
ok add-column '`s.t`.w' long
"$floe" table schema ns.q | grep -q ' w: long' || fail "add-column \`s.t\`.w: $("$floe" table schema ns.q)"
ok rename-column '`a.b`' ab
[ "$(field 2)" = "ab:long:opt" ] || fail "rename-column \`a.b\` ab: $(field 2)"
[ "$(field 4)" = "b:string:opt" ] || fail "struct field a.b after the rename: $(field 4)"
ok drop-column a.b           # field b of struct a, as before
[ "$(field 4)" = "-" ] || fail "drop-column a.b: $(field 4)"
# not quoted: a name with backquotes inside, as written (q``x: there is none)
rc=0; "$floe" table schema ns.q drop-column 'q``x' >/dev/null 2>err.txt || rc=$?
[ $rc = 2 ] && [ "$(field 10)" = 'q`x:long:opt' ] || fail "drop-column q\`\`x: exit $rc, $(field 10)"
ok drop-column '`q``x`'      # quoted: a doubled quote is one
[ "$(field 10)" = "-" ] || fail "drop-column \`q\`\`x\`: $(field 10)"
ok rename-column 'my col' mycol
[ "$(field 9)" = "mycol:long:opt" ] || fail "rename-column 'my col': $(field 9)"
ok set-identifier-fields '"id"'
"$floe" table schema ns.q | grep -q '^identifier fields: id' || fail "set-identifier-fields \"id\""

# paths that do not parse: usage errors naming the offset, the table unchanged
before=$("$floe" table schema ns.q --json)
usage_refused "unterminated" "unterminated column name at offset 0" table schema ns.q drop-column '`ab'
usage_refused "empty name" "expected a column name at offset 2" table schema ns.q drop-column 'a..c'
usage_refused "trailing dot" "expected a column name" table schema ns.q add-column 'a.' long
usage_refused "text after a quote" "a dot or the end expected" table schema ns.q rename-column '`ab`x' y
usage_refused "anchor" "unterminated" table schema ns.q move-column id after '"ab'
usage_refused "identifier" "unterminated" table schema ns.q set-identifier-fields '`id'
[ "$("$floe" table schema ns.q --json)" = "$before" ] || fail "a refused path changed the schema"
# a column the schema lacks is a usage error (129ff85), naming it as typed
rc=0; "$floe" table schema ns.q drop-column '`nope.x`' >/dev/null 2>err.txt || rc=$?
[ $rc = 2 ] && grep -qF 'no column `nope.x` in the schema' err.txt || fail "drop-column \`nope.x\`: exit $rc, $(cat err.txt)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
