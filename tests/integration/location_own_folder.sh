#!/usr/bin/env bash
# location_own_folder.sh - issue 24, adversary finding adv24b 14: a table is created only in
# a missing or empty folder. `floe table create --location DIR` with a user's file in DIR
# (at the top or deep down) is refused with exit 2 naming the folder and the file, and the
# file survives (floe orphans would have deleted it); so is a create whose default location
# still holds a table dropped without --purge, and a create through floe catalog serve
# (400). A missing folder or one holding only empty folders is fine, and orphan removal of
# such a table still deletes what the table does not reference.
set -euo pipefail
name=location_own_folder oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

# a user's folder: refused, exit 2, folder and file named, nothing created
mkdir -p user/deep/er
echo precious > user/precious.txt
touch -d 2020-01-01 user/precious.txt
rc=0; "$floe" table create ns.pg --schema s.json --location "$tmp/user" > out.txt 2> err.txt || rc=$?
[ $rc = 2 ] || fail "create in a folder holding a file: exit $rc"
grep -q "location file://$tmp/user already holds files (file://$tmp/user/precious.txt)" err.txt ||
  fail "create in a folder holding a file: $(cat err.txt)"
[ -z "$("$floe" table list ns)" ] || fail "a table was created: $("$floe" table list ns)"
[ "$(cat user/precious.txt)" = precious ] || fail "the user's file is gone"
# a file deep down (the listing stops at the first file, in any folder)
rm user/precious.txt
echo x > user/deep/er/f.bin
rc=0; "$floe" table create ns.pg --schema s.json --location "$tmp/user" --json > out.txt 2> err.txt || rc=$?
[ $rc = 2 ] || fail "create in a folder holding a deep file: exit $rc"
python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["exit"] == 2 and sys.argv[2] in e["message"], e' out.txt "$tmp/user/deep/er/f.bin" ||
  fail "--json: $(cat out.txt)"

# empty folders and a missing folder are fine; orphans of such a table works as before
rm user/deep/er/f.bin
"$floe" table create ns.pg --schema s.json --location "$tmp/user" > /dev/null ||
  fail "create in a folder holding only empty folders"
"$floe" table create ns.pm --schema s.json --location "$tmp/missing/here" > /dev/null ||
  fail "create in a missing folder"
printf '{"k":"a","v":1}\n' > one.ndjson
"$floe" append ns.pg one.ndjson > /dev/null
echo stray > user/data/stray.parquet
touch -d 2020-01-01 user/data/stray.parquet
"$floe" orphans ns.pg --older-than 1d --json > out.txt || fail "orphans: $(cat out.txt)"
[ ! -e user/data/stray.parquet ] || fail "orphans kept a file the table does not reference"
[ "$("$floe" scan ns.pg | wc -l)" = 1 ] || fail "orphans changed the table"

# the default location of a table dropped without --purge still holds its files
"$floe" table create ns.d --schema s.json > /dev/null
"$floe" table drop ns.d > /dev/null
rc=0; "$floe" table create ns.d --schema s.json > out.txt 2> err.txt || rc=$?
[ $rc != 0 ] && grep -q "location file://$tmp/wh/ns/d already holds files" err.txt ||
  fail "re-create over a dropped table's files: exit $rc, $(cat err.txt)"
"$floe" table drop ns.pm --purge > /dev/null
"$floe" table create ns.pm --schema s.json --location "$tmp/missing/here" > /dev/null ||
  fail "re-create after drop --purge"

# floe catalog serve refuses it too (its server checks what it creates)
"$floe" catalog serve --listen 127.0.0.1:0 --port-file rest.port 2> rest.log &
rest=$!
trap 'kill "$rest" 2>/dev/null; wait "$rest" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s rest.port ] && break; sleep 0.1; done
[ -s rest.port ] || { echo "$name: FAIL: floe catalog serve did not start: $(cat rest.log)"; exit 1; }
mkdir -p wh/ns/r && echo precious > wh/ns/r/keep.txt
rc=0
FLOE_CATALOG_URI=http://127.0.0.1:$(cat rest.port) FLOE_STATE_DB=$tmp/state.db \
  "$floe" table create ns.r --schema s.json --location "$tmp/wh/ns/r" > out.txt 2> err.txt || rc=$?
[ $rc != 0 ] && grep -q "already holds files (file://$tmp/wh/ns/r/keep.txt)" err.txt ||
  fail "create through REST: exit $rc, $(cat err.txt)"
[ -f wh/ns/r/keep.txt ] || fail "REST: the user's file is gone"

[ $fails = 0 ] || exit 1
echo "$name: ok"
