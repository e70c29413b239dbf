#!/usr/bin/env bash
# rest_move_write_paths.sh - adversary finding F1 on issue 21 (adv21d, data loss): a
# commit's set-location left the table's write.data.path behind in the old folder; a new
# table created there then had its orphan removal delete the first table's committed data.
#  1. `floe catalog serve`: set-location while write.data.path / write.metadata.path /
#     write.object-storage.path would lie outside the new location is a 400 naming the
#     property, nothing committed - in a commit (also with the path set in the same
#     commit), a transaction and a staged create's commit; moving the write path in the
#     same commit (or removing it) is taken;
#  2. placement (every catalog): a table's location may lie neither inside nor around
#     another table's write.data.path / write.metadata.path outside its location - create
#     (REST and CLI), a set-location and a register into it are refused;
#  3. orphan removal of a table whose location holds another table's write.data.path
#     (metadata written by another tool) deletes nothing, and the other table still reads.
name=rest_move_write_paths
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

wh=$tmp/wh
S=$id_schema
echo "$S" > "$tmp/s.json"
echo '{"id":1}' > "$tmp/e.ndjson"
"$floe" namespace create shop >/dev/null
serve_checked ""
T=open
setprops() { echo "{\"action\":\"set-properties\",\"updates\":{\"$1\":\"$2\"}}"; }
setloc() { echo "{\"action\":\"set-location\",\"location\":\"$1\"}"; }
commit() { local IFS=,; echo "{\"requirements\":[],\"updates\":[$*]}"; }
loc_of() { "$floe" table describe "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["location"])'; }

# 1. the write paths move with the table (a fresh table per case)
i=0
for prop in write.data.path write.metadata.path write.object-storage.path; do
  for route in commit transaction; do
    i=$((i + 1))
    expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"m$i\",\"schema\":$S}"
    expect 200 $T POST /v1/namespaces/shop/tables/m$i "$(commit "$(setprops $prop "$wh/shop/m$i/w")")"
    if [ $route = commit ]; then
      expect_soft "$prop left behind by set-location" 400 "$prop" POST /v1/namespaces/shop/tables/m$i \
        "$(commit "$(setloc "$wh/shop/m${i}moved")")"
    else
      expect_soft "$prop left behind in a transaction" 400 "$prop" POST /v1/transactions/commit \
        "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"m$i\"},$(commit "$(setloc "$wh/shop/m${i}moved")" | cut -c2-)]}"
    fi
    [ "$(loc_of shop.m$i)" = "file://$wh/shop/m$i" ] || {
      echo "$name: FAIL: a refused set-location moved shop.m$i: $(loc_of shop.m$i)" >&2
      fails=$((fails + 1)); }
  done
done
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"one\",\"schema\":$S}"
expect_soft "write.data.path set and left behind in one commit" 400 write.data.path \
  POST /v1/namespaces/shop/tables/one \
  "$(commit "$(setprops write.data.path "$wh/shop/one/data")" "$(setloc "$wh/shop/onemoved")")"
SPEC='{"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":-1},{"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":-1}'
expect_soft "a staged create's write.data.path left behind" 400 write.data.path \
  POST /v1/namespaces/shop/tables/st \
  "{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[{\"action\":\"add-schema\",\"schema\":$S},{\"action\":\"set-current-schema\",\"schema-id\":-1},$SPEC,$(setprops write.data.path "file://$wh/shop/st/data"),$(setloc "file://$wh/shop/st2")]}"
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"ev3\",\"schema\":$S}"
# what stays allowed: the path moved (or removed) in the same commit
expect 200 $T POST /v1/namespaces/shop/tables/ev3 "$(commit "$(setprops write.data.path "$wh/shop/ev3/data")")"
expect 200 $T POST /v1/namespaces/shop/tables/ev3 \
  "$(commit "$(setloc "$wh/shop/ev3moved")" "$(setprops write.data.path "$wh/shop/ev3moved/data")")"
expect 200 $T POST /v1/namespaces/shop/tables/ev3 \
  "{\"requirements\":[],\"updates\":[$(setloc "$wh/shop/ev3m2"),{\"action\":\"remove-properties\",\"removals\":[\"write.data.path\"]}]}"
"$floe" append shop.ev3 "$tmp/e.ndjson" >/dev/null
ls "$wh"/shop/ev3m2/data/*.parquet >/dev/null 2>&1 || fail "shop.ev3 did not write into its new location"

# 2. a table's write path outside its location is its own place
"$floe" table create shop.a --schema "$tmp/s.json" >/dev/null
"$floe" table properties shop.a set "write.data.path=$wh/shop/box/adata" >/dev/null ||
  fail "a write.data.path of the table's own was refused"
"$floe" append shop.a "$tmp/e.ndjson" >/dev/null
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"mover\",\"schema\":$S}"
i=0
for where in "$wh/shop/box/adata" "$wh/shop/box/adata/x" "$wh/shop/box"; do
  i=$((i + 1))
  expect_soft "create at $where" 400 "write.data.path of table shop.a" \
    POST /v1/namespaces/shop/tables "{\"name\":\"nt$i\",\"location\":\"$where\",\"schema\":$S}"
  expect_soft "set-location to $where" 400 "write.data.path of table shop.a" \
    POST /v1/namespaces/shop/tables/mover "$(commit "$(setloc "$where")")"
  rc=0; "$floe" table create shop.cli$i --schema "$tmp/s.json" --location "$where" >"$tmp/out" 2>&1 || rc=$?
  if [ $rc = 0 ] || ! grep -q "write.data.path of table shop.a" "$tmp/out"; then
    echo "$name: FAIL: floe table create at $where: exit $rc: $(cat "$tmp/out")" >&2
    fails=$((fails + 1))
  fi
done
# a register whose metadata places the table there
"$floe" table create shop.r --schema "$tmp/s.json" --location "$wh/shop/r" >/dev/null
rmeta=$(req $T GET /v1/namespaces/shop/tables/r >/dev/null; jget '["metadata-location"]' < "$tmp/body")
expect 204 $T DELETE "/v1/namespaces/shop/tables/r?purgeRequested=false"
python3 - "${rmeta#file://}" "$wh/shop/box/adata/r/metadata/00000-moved.metadata.json" "file://$wh/shop/box/adata/r" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1]))
m["location"] = sys.argv[3]
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
json.dump(m, open(sys.argv[2], "w"))
PY
rc=0; "$floe" table register shop.r "file://$wh/shop/box/adata/r/metadata/00000-moved.metadata.json" \
  >"$tmp/out" 2>&1 || rc=$?
if [ $rc = 0 ] || ! grep -q "write.data.path of table shop.a" "$tmp/out"; then
  echo "$name: FAIL: register inside shop.a's write.data.path: exit $rc: $(cat "$tmp/out")" >&2
  fails=$((fails + 1))
fi
rm -rf "$wh/shop/box/adata/r"
[ "$("$floe" scan shop.a | wc -l)" = 1 ] || fail "shop.a lost its row"

# 3. orphan removal does not list a location that holds another table's write path
"$floe" table create shop.o1 --schema "$tmp/s.json" >/dev/null
"$floe" table create shop.o2 --schema "$tmp/s.json" >/dev/null
"$floe" append shop.o2 "$tmp/e.ndjson" >/dev/null
o1meta=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select metadata_location from iceberg_tables where table_name=?", ("o1",)).fetchone()[0])' "$tmp/catalog.db")
python3 - "$tmp/catalog.db" "${o1meta#file://}" "$wh/shop/o2/o1data" <<'PY'
import json, sqlite3, sys
db, meta, data = sys.argv[1:]
m = json.load(open(meta))
m.setdefault("properties", {})["write.data.path"] = "file://" + data
new = meta.replace(".metadata.json", "-x.metadata.json")
json.dump(m, open(new, "w"))
c = sqlite3.connect(db)
c.execute("update iceberg_tables set metadata_location=?, previous_metadata_location=? where table_name='o1'",
          ("file://" + new, "file://" + meta))
c.commit()
PY
"$floe" append shop.o1 "$tmp/e.ndjson" >/dev/null
ls "$wh"/shop/o2/o1data/*.parquet >/dev/null 2>&1 || fail "shop.o1 did not write into its write.data.path"
rc=0; "$floe" orphans shop.o2 --older-than 0s --force >"$tmp/out" 2>&1 || rc=$?
if [ $rc = 0 ] || ! grep -q "write.data.path of table shop.o1" "$tmp/out"; then
  echo "$name: FAIL: orphans of shop.o2 listed shop.o1's write.data.path: exit $rc: $(cat "$tmp/out")" >&2
  fails=$((fails + 1))
fi
if ! "$floe" scan shop.o1 >"$tmp/out" 2>&1 || [ "$(wc -l < "$tmp/out")" != 1 ]; then
  echo "$name: FAIL: shop.o1 after orphans of shop.o2: $(head -2 "$tmp/out")" >&2
  fails=$((fails + 1))
fi

server_alive
openapi_check
[ $fails = 0 ] || fail "$fails cases failed"
echo "$name: ok"
