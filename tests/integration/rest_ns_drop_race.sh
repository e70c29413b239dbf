#!/usr/bin/env bash
# rest_ns_drop_race.sh - adversary finding N4 on issue 21 (adv21e, wrong answer): a
# DELETE /v1/namespaces/{ns} racing POST .../namespaces/{ns}/tables answered 204 while the
# create answered 200: the drop checked the namespace empty and deleted its property rows
# after the create had checked that it exists and before it inserted the table row, so the
# namespace lived on through the new table with its properties gone. The SQL catalog now
# checks the namespace in the transaction that inserts the table, and the drop's emptiness
# check and delete are one transaction, the two taken in turn.
#
# 40 rounds: namespace ndI (owner=alice) gets a table created and, D ms later, dropped.
# D follows the boundary between "the drop came first" and "the create came first" (up
# 6 ms after the one, down 5 after the other), where the race is: the binary before the
# fix got 6 of the 40 rounds wrong (1 in 24 with fixed delays). Each round must end one of two ways: the drop
# 204, the create 404 and the namespace gone; or the drop 409 NamespaceNotEmptyException,
# the create 200 and the namespace with its owner property. (The catalog holds 30 other
# tables, which every create reads for its placement check, so a create takes a while.)
# The same 40 rounds then run on the filesystem catalog (no namespace properties there).
name=rest_ns_drop_race
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

S=$id_schema
T=open
# rounds WHAT PROPS: 40 rounds on the server running; PROPS the new namespace's properties
# (the filesystem catalog keeps none: then its owner is not looked at)
rounds() {
  local what=$1 props=$2 dropped=0 refused=0 d=100 i ns drop create nsget owner round cpid
  for i in $(seq 0 39); do
    ns=nd$i
    expect 200 $T POST /v1/namespaces "{\"namespace\":[\"$ns\"],\"properties\":$props}"
    curl -s -o "$tmp/create.body" -w '%{http_code}' -H 'Content-Type: application/json' \
      -X POST "$base/v1/namespaces/$ns/tables" -d "{\"name\":\"t\",\"schema\":$S}" > "$tmp/create.code" &
    cpid=$!
    sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
    drop=$(req $T DELETE "/v1/namespaces/$ns")
    cp "$tmp/body" "$tmp/drop.body"
    wait "$cpid"
    create=$(cat "$tmp/create.code")
    nsget=$(req $T GET "/v1/namespaces/$ns")
    owner=$( [ "$nsget" = 200 ] && jget '["properties"].get("owner","")' < "$tmp/body" || true)
    round="$what round $i (drop after $d ms): drop $drop, create $create, namespace $nsget${owner:+ (owner $owner)}"
    if [ "$drop" = 204 ] && [ "$create" = 404 ] && [ "$nsget" = 404 ]; then
      dropped=$((dropped + 1))
      d=$((d + 6))
    elif [ "$drop" = 409 ] && [ "$create" = 200 ] && [ "$nsget" = 200 ] &&
         { [ "$owner" = alice ] || [ "$props" = '{}' ]; } &&
         grep -q NamespaceNotEmptyException "$tmp/drop.body"; then
      refused=$((refused + 1))
      d=$((d > 5 ? d - 5 : 0))
    else
      soft "$round: $(head -c 200 "$tmp/drop.body") / $(head -c 200 "$tmp/create.body")"
    fi
  done
  echo "$name: $what: $dropped rounds dropped (create 404), $refused refused (409)"
}

# on_catalog WHAT PROPS: namespace other with 30 tables behind a started server, then the
# rounds (PROPS: the namespace properties the catalog keeps)
on_catalog() {
  "$floe" namespace create other >/dev/null
  start_server
  for i in $(seq 30); do
    expect 200 $T POST /v1/namespaces/other/tables "{\"name\":\"o$i\",\"schema\":$S}"
  done
  rounds "$1" "$2"
  server_alive
}

on_catalog "sqlite catalog" '{"owner":"alice"}'

# the filesystem catalog: a namespace is a folder, its drop an rmdir; the create wrote
# v1.metadata.json making every missing folder, so a drop between the create's look at
# the namespace and its write answered 204 and the namespace came back with the table
to_fs_catalog "$tmp/fswh"
on_catalog "filesystem catalog" '{}'
[ "$fails" = 0 ] || fail "$fails of 80 rounds failed"
echo "$name: ok"
