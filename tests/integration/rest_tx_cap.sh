#!/usr/bin/env bash
# rest_tx_cap.sh - adversary finding N6 on issue 21 (adv21e, denial of service): one
# transactions/commit naming 40,000 tables (3.7 MB) ran for more than 10 minutes - the "a
# table changed twice" check compared every pair of changes, and each set-location read
# every table of the catalog again - and went on after its client had gone. `floe catalog
# serve` now takes at most 1,000 table-changes in one transaction (400 naming the count and
# the cap), finds a table named twice by hashing, loads the tables before reading the
# catalog's places (once, for all the set-locations), and stops at the first missing
# table (404):
#  1. 1,001 changes: 400 naming 1001 and 1000;
#  2. 1,000 changes of missing tables, and 1,000 set-locations of missing tables on a
#     catalog of 40 tables: 404 for the first, in seconds;
#  3. 1,000 changes, the last naming the first's table again: 400 naming both;
#  4. the 40 tables moved in one transaction: 204 in seconds, each at its new location;
#  5. 40,000 changes (3.7 MB): 400 in seconds.
name=rest_tx_cap
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

wh=$tmp/wh
S=$id_schema
open_shop

# changes FILE N NAME_PREFIX [LOCATION_PREFIX] [DUP]: a transaction body of N changes of
# tables PREFIX0..; with LOCATION_PREFIX each a set-location to LOCATION_PREFIX<i>; DUP:
# the last change names table PREFIX0 again
changes() {
  python3 - "$@" <<'PY'
import json, sys
path, n, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
loc = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
dup = len(sys.argv) > 5
def change(i):
    up = [{"action": "set-location", "location": "%s%d" % (loc, i)}] if loc else []
    return {"identifier": {"namespace": ["shop"], "name": "%s%d" % (prefix, i)},
            "requirements": [], "updates": up}
ch = [change(i) for i in range(n)]
if dup:
    ch[-1] = change(0)
json.dump({"table-changes": ch}, open(path, "w"))
PY
}

# timed WHAT STATUS TEXT SECONDS FILE: POST FILE to transactions/commit; a soft failure
# unless the answer is STATUS holding TEXT within SECONDS
timed() {
  local what=$1 want=$2 text=$3 limit=$4 file=$5 got t0 t1
  t0=$(date +%s%N)
  got=$(curl -s -m "$limit" -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -X POST "$base/v1/transactions/commit" --data-binary "@$file" || true)
  t1=$(date +%s%N)
  local ms=$(((t1 - t0) / 1000000))
  echo "$name: $what: $got in $ms ms"
  if [ "$got" != "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/body"; }; then
    soft "$what: $got after $ms ms (expected $want '$text' within $limit s): $(head -c 300 "$tmp/body")"
  fi
}

for i in $(seq 0 39); do
  expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"t$i\",\"schema\":$S}"
done

# 1. over the cap
changes "$tmp/over.json" 1001 n
timed "1,001 changes" 400 "has 1001 table-changes; at most 1000" 30 "$tmp/over.json"

# 2. at the cap, the first table missing
changes "$tmp/cap.json" 1000 n
timed "1,000 changes of missing tables" 404 "shop.n0 does not exist" 20 "$tmp/cap.json"
changes "$tmp/caploc.json" 1000 n "file://$wh/shop/m"
timed "1,000 set-locations of missing tables" 404 "shop.n0 does not exist" 20 "$tmp/caploc.json"

# 3. a table named twice
changes "$tmp/dup.json" 1000 n "" dup
timed "1,000 changes, one table twice" 400 "table-changes[999]: table shop.n0 is changed twice (table-changes[0])" 20 "$tmp/dup.json"

# 4. the 40 tables moved at once
changes "$tmp/move.json" 40 t "file://$wh/shop/m"
timed "40 tables moved" 204 "" 60 "$tmp/move.json"
for i in 0 17 39; do
  expect 200 $T GET /v1/namespaces/shop/tables/t$i
  loc=$(jget '["metadata"]["location"]' < "$tmp/body")
  [ "$loc" = "file://$wh/shop/m$i" ] || soft "shop.t$i is at $loc, not file://$wh/shop/m$i"
done

# 5. 40,000 changes (the finding's body; last: the binary before the fix is still busy
# with it after the client gives up)
changes "$tmp/huge.json" 40000 n
timed "40,000 changes" 400 "has 40000 table-changes; at most 1000" 30 "$tmp/huge.json"

server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
