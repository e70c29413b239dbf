#!/usr/bin/env bash
# table_list_json.sh - issue 24: `floe table list --json` prints one JSON document when
# the listing fails part-way (a namespace folder of a filesystem catalog that cannot be
# read): the error document alone, exit 1. It printed `["a.t1"` and then the error
# document after it, which no JSON parser reads. The text listing keeps the lines it had
# and says what failed on stderr; a listing that succeeds is the array as before.
set -euo pipefail
name=table_list_json oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

# an unreadable folder: as root, run floe as nobody (root reads any folder)
as_user=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "$name: SKIP: root without setpriv"; exit 77; }
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 755 "$tmp"
  "${as_user[@]}" test -x "$floe" || { echo "$name: SKIP: $floe not executable by nobody"; exit 77; }
fi
export FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE="$tmp/fsw"
unset FLOE_CATALOG_URI
for ns in a b c; do "$floe" namespace create $ns >/dev/null; "$floe" table create $ns.t --schema s.json >/dev/null; done
"$floe" namespace create a.sub >/dev/null

out=$("${as_user[@]}" "$floe" table list --json) || fail "table list --json: exit $?"
[ "$out" = '["a.t","b.t","c.t"]' ] || fail "table list --json: $out"

chmod 000 "$tmp/fsw/b"
rc=0; "${as_user[@]}" "$floe" table list --json > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] || fail "table list --json, b unreadable: exit $rc"
python3 -c 'import json,sys
lines=open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
e=json.loads(lines[0])["error"]
assert e["exit"] == 1 and "fsw/b" in e["message"], e' out.txt 2>/dev/null ||
  fail "table list --json, b unreadable: not one error document: $(cat out.txt)"
grep -q "^floe: list .*fsw/b" err.txt || fail "table list --json, b unreadable: stderr $(cat err.txt)"

# text: the tables listed before the failure, then the error
rc=0; "${as_user[@]}" "$floe" table list > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] && [ "$(cat out.txt)" = a.t ] && grep -q "^floe: list .*fsw/b" err.txt ||
  fail "table list, b unreadable: exit $rc, $(cat out.txt) / $(cat err.txt)"
chmod 755 "$tmp/fsw/b"

[ $fails = 0 ] || exit 1
echo "$name: ok"
