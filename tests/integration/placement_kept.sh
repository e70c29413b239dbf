#!/usr/bin/env bash
# placement_kept.sh - issue 21: table creation was quadratic in the number of tables. The
# placement check (a new table's location neither inside nor around another table's
# folder or write paths) loaded every table's metadata on each create: 1,000 creates
# took 104 s. The places are now kept in the catalog (floe_table_places; the filesystem
# catalog's in <warehouse>/_leases.db) per metadata pointer: a create lists the tables
# with their pointers and loads only those whose pointer moved. This checks the outcome
# (how many tables a create loads, from the debug log) and that what is kept never hides
# a change: a commit by floe, one by another writer, a rename, a drop, a re-create.
set -euo pipefail
name=placement_kept oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
command -v sqlite3 >/dev/null || { echo "$name: SKIP: no sqlite3"; exit 77; }

# loads WHAT N ARGS...: floe ARGS (a create) succeeds and its placement check loads N tables
loads() {
  local what=$1 want=$2 got
  shift 2
  FLOE_LOG=debug "$floe" "$@" >out.txt 2>err.txt || { fail "$what: $(cat err.txt)"; return; }
  got=$(sed -n 's/.*placement: \([0-9]*\) of [0-9]* tables loaded.*/\1/p' err.txt | tail -1)
  [ "$got" = "$want" ] || fail "$what: the placement check loaded ${got:-every} table(s), want $want"
}
# refused WHAT TEXT ARGS...: floe ARGS fails with TEXT on stderr
refused() {
  local what=$1 text=$2 rc=0
  shift 2
  "$floe" "$@" >out.txt 2>err.txt || rc=$?
  [ $rc != 0 ] && grep -qF -- "$text" err.txt || fail "$what: exit $rc: $(cat err.txt)"
}

for i in 1 2 3 4 5 6; do "$floe" table create ns.t$i --schema s.json >/dev/null; done
# a reading keeps the places of all; a create then loads only the table made since
"$floe" table create ns.t7 --schema s.json >/dev/null
loads "a create after seven" 1 table create ns.t8 --schema s.json
[ "$(sqlite3 "$catalog_db" 'SELECT count(*) FROM floe_table_places' 2>&1)" -ge 7 ] 2>/dev/null ||
  fail "no places kept: $(sqlite3 "$catalog_db" 'SELECT table_name FROM floe_table_places' 2>&1)"

# a commit by floe: t1 writes data into a folder of its own outside its location
"$floe" table properties ns.t1 set "write.data.path=$tmp/wh/shared1" >/dev/null
loads "a create after a commit (t8 was kept by its check)" 1 table create ns.t9 --schema s.json
refused "a location inside t1's write.data.path (set by floe)" "write.data.path" \
  table create ns.in1 --schema s.json --location "$tmp/wh/shared1/x"

# a commit by another writer (not floe: nothing but the pointer tells)
write_paths_to t2 "$tmp/wh/shared2"
refused "a location inside t2's write paths (set by another writer)" "ns.t2" \
  table create ns.in2 --schema s.json --location "$tmp/wh/shared2/data/x"
refused "a location around t2's write paths" "ns.t2" \
  table create ns.in3 --schema s.json --location "$tmp/wh/shared2"

# a rename: the place goes with the name; a drop frees it; a re-create is a new table
"$floe" table rename ns.t3 ns.t3b >/dev/null
refused "a location inside renamed t3b" "ns.t3b" \
  table create ns.in4 --schema s.json --location "$tmp/wh/ns/t3/x"
"$floe" table drop ns.t4 >/dev/null
loads "a create inside a dropped table's folder" 0 \
  table create ns.in5 --schema s.json --location "$tmp/wh/ns/t4/x"
sqlite3 "$catalog_db" "SELECT 1 FROM floe_table_places WHERE table_name = 't4'" 2>/dev/null | grep -q . &&
  fail "the dropped table's place is still kept"
"$floe" table create ns.t5b --schema s.json --location "$tmp/wh/elsewhere5" >/dev/null
"$floe" table drop ns.t5 >/dev/null
"$floe" table rename ns.t5b ns.t5 >/dev/null
refused "a location inside t5, re-made elsewhere" "ns.t5" \
  table create ns.in6 --schema s.json --location "$tmp/wh/elsewhere5/x"
loads "a create inside t5's old folder" 0 \
  table create ns.in7 --schema s.json --location "$tmp/wh/ns/t5/y"

# kept rows that cannot be used (another warehouse, a broken row) are not trusted
sqlite3 "$catalog_db" "UPDATE floe_table_places SET location = 'file:///nowhere',
  warehouse = 'file:///other' WHERE table_name = 't6'" 2>/dev/null || fail "no kept place of t6"
refused "a location inside t6 (its row from another warehouse)" "ns.t6" \
  table create ns.in8 --schema s.json --location "$tmp/wh/ns/t6/x"
# a database where the rows cannot be written: the check still runs, loading every table
sqlite3 "$catalog_db" "DROP TABLE IF EXISTS floe_table_places;
  CREATE VIEW floe_table_places AS SELECT 1 AS x"
refused "a location inside t7 (no rows kept)" "ns.t7" \
  table create ns.in9 --schema s.json --location "$tmp/wh/ns/t7/x"
sqlite3 "$catalog_db" "DROP VIEW floe_table_places"

# the filesystem catalog keeps them beside its leases
fsw=$tmp/fswh
mkdir -p "$fsw"
fs() { FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=$fsw FLOE_CATALOG_URI= "$floe" "$@"; }
fs namespace create shop >/dev/null
for i in 1 2 3 4; do fs table create shop.t$i --schema s.json >/dev/null; done
FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=$fsw FLOE_CATALOG_URI= \
  loads "a filesystem catalog create after four" 1 table create shop.t5 --schema s.json
fs table properties shop.t1 set "write.data.path=$fsw/shared" >/dev/null
FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=$fsw FLOE_CATALOG_URI= \
  loads "a filesystem catalog create after a commit" 1 table create shop.t6 --schema s.json
fs table properties shop.t2 set "write.data.path=$fsw/shared/x" >out.txt 2>err.txt &&
  fail "t2's write.data.path inside t1's: $(cat out.txt)"
grep -q "shop.t1" err.txt || fail "t2's write.data.path inside t1's: $(cat err.txt)"

[ "$fails" = 0 ] || { echo "$name: $fails failure(s)" >&2; exit 1; }
echo "$name: ok"
