#!/usr/bin/env bash
# write_path_place.sh - issue 24, adversary finding adv24d 3 and 4: a table's write.data.path
# and write.metadata.path (set at create or with `floe table properties set`) are folders
# the table writes to and its maintenance deletes in, so they must be places of its own:
# one inside another table's location (whose orphan removal then deleted the first table's
# committed data files), inside the warehouse's reserved folders or around the warehouse
# is refused (exit 2, naming the property and what is in the way); a relative one is
# recorded as an absolute URI (it was recorded relative to the folder floe ran in, so the
# table could not be read from anywhere else); an empty one is refused. A folder of the
# table's own outside its location still works.
set -euo pipefail
name=write_path_place oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
echo '{"k":"a","v":1}' > a.ndjson

"$floe" table create ns.t --schema s.json > /dev/null
"$floe" table create ns.other --schema s.json > /dev/null
"$floe" append ns.other a.ndjson > /dev/null
other=$("$floe" table describe ns.other --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["location"])')

# 3: into another table's location: refused, nothing set, nothing written there
for prop in write.data.path write.metadata.path; do
  for where in "$other" "$other/data" "$tmp/wh" "$tmp/wh/_landing/x"; do
    rc=0; "$floe" table properties ns.t set "$prop=$where" > out.txt 2> err.txt || rc=$?
    [ $rc = 2 ] || fail "$prop=$where: exit $rc ($(cat out.txt err.txt))"
    grep -q "property $prop = .* is not a folder of the table's own" err.txt ||
      fail "$prop=$where: $(cat err.txt)"
  done
done
rc=0; "$floe" table properties ns.t set "write.data.path=$other" --json > out.txt 2> err.txt || rc=$?
[ $rc = 2 ] || fail "--json: exit $rc"
python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["exit"] == 2 and "write.data.path" in e["message"] and "ns.other" in e["message"], e' out.txt ||
  fail "--json: $(cat out.txt)"
[ "$(mq ns.t "m['properties'].get('write.data.path')")" = None ] || fail "write.data.path was set"
# the same at create
rc=0; "$floe" table create ns.u --schema s.json --property "write.data.path=$other/data" \
  > out.txt 2> err.txt || rc=$?
[ $rc = 2 ] || fail "create with write.data.path in another table: exit $rc"
grep -q "ns.other" err.txt || fail "create: $(cat err.txt)"
# the scenario of the finding: the other table's orphan removal keeps its files, and t reads
"$floe" append ns.t a.ndjson > /dev/null
find "${other#file://}" -type f -exec touch -d '3 days ago' {} +
"$floe" orphans ns.other --older-than 2d > /dev/null
[ "$("$floe" scan ns.t | wc -l)" = 1 ] || fail "ns.t lost its rows"
[ "$("$floe" scan ns.other | wc -l)" = 1 ] || fail "ns.other lost its rows"

# 4: relative and empty
mkdir -p run && cd run
"$floe" table properties ns.t set write.data.path=rel/dir > /dev/null || fail "relative: refused"
cd "$tmp"
[ "$(mq ns.t "m['properties']['write.data.path']")" = "file://$tmp/run/rel/dir" ] ||
  fail "relative recorded as $(mq ns.t "m['properties']['write.data.path']")"
"$floe" append ns.t a.ndjson > /dev/null
"$floe" files ns.t --json > files.json
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
files = doc["files"] if isinstance(doc, dict) else doc
paths = [f.get("file_path") or f.get("path") for f in files]
assert any(p.startswith("file://" + sys.argv[2] + "/run/rel/dir/") for p in paths), paths
assert all(p.startswith("file://") for p in paths), paths' files.json "$tmp" ||
  fail "data file paths: $(cat files.json)"
mkdir -p elsewhere && (cd elsewhere && [ "$("$floe" scan ns.t | wc -l)" = 2 ]) ||
  fail "scan from another folder"
rc=0; "$floe" table properties ns.t set write.metadata.path= > out.txt 2> err.txt || rc=$?
[ $rc = 2 ] && grep -q "write.metadata.path is empty" err.txt || fail "empty: exit $rc $(cat err.txt)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
