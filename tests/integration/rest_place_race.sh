#!/usr/bin/env bash
# rest_place_race.sh - adversary finding N3 on issue 21 (adv21e): two tables ended at one
# location. The placement of a set-location was checked against the catalog as it was
# before the request, so (1) one transactions/commit moving two tables into one folder,
# or one into the other's new folder, was a 204; (2) two set-locations into one folder
# sent at once, or a set-location and a create there, both answered 200. `floe catalog
# serve` now checks a transaction's moves against each other (400 naming both tables),
# and checks and swaps a set-location under the catalog's placement lock, as creates
# are: of two such requests one is refused.
name=rest_place_race
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

wh=$tmp/wh
S=$id_schema
open_shop
for t in ta tb sa sb; do
  expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"$t\",\"schema\":$S}"
done
setloc() { echo "{\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$1\"}]}"; }
change() { echo "{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"$1\"},\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$2\"}]}"; }
locof() { req $T GET /v1/namespaces/shop/tables/$1 >/dev/null; jget '["metadata"]["location"]' < "$tmp/body"; }

# 1. one transaction
expect_soft "a transaction moving two tables into one folder" 400 "moves table shop.ta" \
  POST /v1/transactions/commit "{\"table-changes\":[$(change ta "file://$wh/shop/same"),$(change tb "file://$wh/shop/same")]}"
expect_soft "a transaction moving a table inside another's new folder" 400 "lies inside" \
  POST /v1/transactions/commit "{\"table-changes\":[$(change ta "file://$wh/shop/nest"),$(change tb "file://$wh/shop/nest/inner")]}"
expect_soft "a transaction moving a table around another's new folder" 400 "contains" \
  POST /v1/transactions/commit "{\"table-changes\":[$(change ta "file://$wh/shop/nest2/inner"),$(change tb "file://$wh/shop/nest2")]}"
[ "$(locof ta)" = "file://$wh/shop/ta" ] && [ "$(locof tb)" = "file://$wh/shop/tb" ] ||
  soft "a refused transaction moved a table: $(locof ta) $(locof tb)"
expect 204 $T POST /v1/transactions/commit "{\"table-changes\":[$(change ta "file://$wh/shop/ta2"),$(change tb "file://$wh/shop/tb2")]}"

# 2. requests at once: two set-locations into one folder, a set-location and a create
post() { curl -s -o /dev/null -w '%{http_code}' -XPOST -H 'Content-Type: application/json' "$base$1" -d "$2"; }
both_moves=0 move_create=0 none=0
for i in $(seq 20); do
  L=file://$wh/shop/m$i
  post /v1/namespaces/shop/tables/sa "$(setloc "$L")" > "$tmp/a" & a=$!
  post /v1/namespaces/shop/tables/sb "$(setloc "$L")" > "$tmp/b" & b=$!
  wait $a $b
  [ "$(cat "$tmp/a")$(cat "$tmp/b")" != 200200 ] || both_moves=$((both_moves + 1))
  grep -q 200 "$tmp/a" "$tmp/b" || none=$((none + 1))
  L=file://$wh/shop/c$i
  post /v1/namespaces/shop/tables/sa "$(setloc "$L")" > "$tmp/a" & a=$!
  post /v1/namespaces/shop/tables "{\"name\":\"c$i\",\"location\":\"$L\",\"schema\":$S}" > "$tmp/b" & b=$!
  wait $a $b
  [ "$(cat "$tmp/a")$(cat "$tmp/b")" != 200200 ] || move_create=$((move_create + 1))
  grep -q 200 "$tmp/a" "$tmp/b" || none=$((none + 1))
done
[ $both_moves = 0 ] || soft "two set-locations into one folder both taken $both_moves times in 20"
[ $move_create = 0 ] || soft "a set-location and a create at one folder both taken $move_create times in 20"
[ $none = 0 ] || soft "neither request taken $none times in 40"
[ "$(locof sa)" != "$(locof sb)" ] || soft "shop.sa and shop.sb share $(locof sa)"
server_alive
[ $fails = 0 ] || fail "$fails cases failed"
echo "$name: ok"
