#!/usr/bin/env bash
# names_utf8.sh - adversary finding adv24b 9: names that are not valid UTF-8 are refused as
# bad arguments (exit 2, "... is not valid UTF-8", naming the byte), never stored and never
# answered "out of memory": namespace create, table create (namespace and table name),
# table rename and register targets, schema add-column (and its doc) and rename-column, ref
# create; through the library a namespace or ref name so fails too. --json output stays
# valid UTF-8 JSON.
set -euo pipefail
name=names_utf8 oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

B=$(printf 'a\xffb')
C=$(printf 's\xc3')
# expect_bad WHAT ARGS...: exit 2, the UTF-8 message, valid JSON under --json
expect_bad() {
  local what=$1 rc=0
  shift
  "$floe" "$@" > out.txt 2> err.txt || rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, $(cat err.txt)"
  grep -q "is not valid UTF-8" err.txt || fail "$what: $(cat err.txt)"
  rc=0
  "$floe" "$@" --json > out.txt 2> err.txt || rc=$?
  python3 -c '
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert d["error"]["exit"] == 2 and "not valid UTF-8" in d["error"]["message"], d' out.txt ||
    fail "$what --json: $(cat out.txt)"
}

expect_bad "namespace create" namespace create "n$B"
expect_bad "namespace create (second level)" namespace create "ns.n$B"
expect_bad "table create (namespace)" table create "n$B.t" --schema s.json
expect_bad "table create (name)" table create "ns.t$B" --schema s.json
"$floe" table create ns.u8 --schema s.json > /dev/null
printf '{"k":"a","v":1}\n' > one.ndjson
"$floe" append ns.u8 one.ndjson > /dev/null
expect_bad "table rename" table rename ns.u8 "ns.r$B"
expect_bad "table register" table register "ns.g$B" "$(meta ns.u8)"
expect_bad "add-column" table schema ns.u8 add-column "c$B" string
expect_bad "rename-column" table schema ns.u8 rename-column k "$C"
expect_bad "ref create" ref create ns.u8 "r$B"
"$floe" namespace list --json | python3 -c 'import json,sys; json.loads(sys.stdin.buffer.read().decode("utf-8"))' ||
  fail "namespace list --json is not UTF-8 JSON"
[ "$("$floe" namespace list)" = ns ] || fail "a namespace was created: $("$floe" namespace list)"
[ "$("$floe" table list ns)" = ns.u8 ] || fail "tables: $("$floe" table list ns)"
[ "$(mq ns.u8 'len(m["schemas"])')" = 1 ] || fail "the schema changed"
[ "$(mq ns.u8 'sorted(m["refs"])')" = "['main']" ] || fail "refs: $(mq ns.u8 'm["refs"]')"
# a write to a branch so named (the library's check: no "out of memory")
rc=0; "$floe" append ns.u8 one.ndjson --branch "b$B" > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] && ! grep -q "out of memory" err.txt ||
  fail "append --branch: exit $rc, $(cat err.txt)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
