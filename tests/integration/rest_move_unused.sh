#!/usr/bin/env bash
# rest_move_unused.sh - adversary finding F2 on issue 21 (adv21d, data loss): a commit's
# set-location moved a table into a folder that still held files - a table dropped
# without purge (kept so it can be registered again), a user's folder - and the moved
# table's orphan removal then deleted them. `floe catalog serve` now holds set-location
# to the rule of a create: the folder must be missing or empty, or hold only the table's
# own files (its folders before the move); else 400 naming a file, nothing committed.
#  1. into a dropped table's kept files: a commit, a transaction, a staged create's
#     commit (set-location, and its default location): 400; the dropped table is then
#     registered again and reads;
#  2. into a user's folder, through a transaction: 400, the file stays through orphans;
#  3. still taken: a missing folder, an empty one, the table's own location.
name=rest_move_unused
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

wh=$tmp/wh
S=$id_schema
echo "$S" > "$tmp/s.json"
echo '{"id":1}' > "$tmp/e.ndjson"
"$floe" namespace create shop >/dev/null
serve_checked ""
T=open
setloc() { echo "{\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$1\"}]}"; }
txn() { echo "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"$1\"},\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$2\"}]}]}"; }
tree() { (cd "$1" && find . -type f | sort | xargs -r sha256sum); }

# 1. a dropped table's kept files (one dropped table per case)
# kept NAME: table shop.NAME made, appended to and dropped without purge; its files' sums
# in $tmp/NAME.before, its last metadata file in $tmp/NAME.ml
kept() {
  expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"$1\",\"schema\":$S}"
  "$floe" append shop.$1 "$tmp/e.ndjson" >/dev/null
  expect 200 $T GET /v1/namespaces/shop/tables/$1
  jget '["metadata-location"]' < "$tmp/body" > "$tmp/$1.ml"
  expect 204 $T DELETE "/v1/namespaces/shop/tables/$1?purgeRequested=false"
  tree "$wh/shop/$1" > "$tmp/$1.before"
  [ -s "$tmp/$1.before" ] || fail "the drop without purge deleted shop.$1's files"
}
for t in dr1 dr2 dr3 dr4; do kept $t; done
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"sc\",\"schema\":$S}"
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"sc2\",\"schema\":$S}"
expect_soft "set-location into a dropped table's files" 400 "already holds files" \
  POST /v1/namespaces/shop/tables/sc "$(setloc "$wh/shop/dr1")"
expect_soft "set-location into a dropped table's files, a transaction" 400 "already holds files" \
  POST /v1/transactions/commit "$(txn sc2 "$wh/shop/dr2")"
SPEC='{"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":-1},{"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":-1}'
staged() { echo "{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[{\"action\":\"add-schema\",\"schema\":$S},{\"action\":\"set-current-schema\",\"schema-id\":-1},$SPEC$1]}"; }
expect_soft "a staged create's set-location into a dropped table's files" 400 "already holds files" \
  POST /v1/namespaces/shop/tables/st "$(staged ",{\"action\":\"set-location\",\"location\":\"file://$wh/shop/dr3\"}")"
expect_soft "a staged create at a dropped table's default location" 400 "already holds files" \
  POST /v1/namespaces/shop/tables/dr4 "$(staged "")"
for t in sc sc2 st dr4; do
  "$floe" orphans shop.$t --older-than 0s --force >/dev/null 2>&1 || true
done
for t in dr1 dr2 dr3 dr4; do
  tree "$wh/shop/$t" > "$tmp/$t.after"
  cmp -s "$tmp/$t.before" "$tmp/$t.after" || {
    echo "$name: FAIL: shop.$t's kept files changed: $(diff "$tmp/$t.before" "$tmp/$t.after" | head -3)" >&2
    fails=$((fails + 1)); }
done
req $T DELETE "/v1/namespaces/shop/tables/dr4?purgeRequested=false" >/dev/null # a staged create's, if taken
expect_soft "shop.dr4 registered again" 200 "metadata" \
  POST /v1/namespaces/shop/register "{\"name\":\"dr4\",\"metadata-location\":\"$(cat "$tmp/dr4.ml")\"}"
if ! "$floe" scan shop.dr4 >"$tmp/out" 2>&1 || [ "$(wc -l < "$tmp/out")" != 1 ]; then
  echo "$name: FAIL: shop.dr4 registered again does not read: $(head -2 "$tmp/out")" >&2
  fails=$((fails + 1))
fi

# 2. a user's folder, 10 days old: taken over by a transaction, default orphan removal
mkdir -p "$wh/shop/reports"
echo "q3 numbers" > "$wh/shop/reports/q3.csv"
touch -d '10 days ago' "$wh/shop/reports/q3.csv"
expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"mv\",\"schema\":$S}"
expect_soft "a transaction's set-location into a user's folder" 400 "reports/q3.csv" \
  POST /v1/transactions/commit "$(txn mv "$wh/shop/reports")"
"$floe" orphans shop.mv >/dev/null 2>&1 || true
[ -f "$wh/shop/reports/q3.csv" ] || { echo "$name: FAIL: the user's file was deleted" >&2; fails=$((fails + 1)); }

# 3. what stays allowed
"$floe" append shop.mv "$tmp/e.ndjson" >/dev/null
expect 200 $T POST /v1/namespaces/shop/tables/mv "$(setloc "$wh/shop/mv")"    # its own files
mkdir -p "$wh/shop/empty"
expect 200 $T POST /v1/namespaces/shop/tables/mv "$(setloc "$wh/shop/empty")" # an empty folder
expect 204 $T POST /v1/transactions/commit "$(txn sc "$wh/shop/sc-new")" # a missing one
expect 204 $T POST /v1/transactions/commit "$(txn sc "$wh/shop/sc-new")" # its own metadata there
"$floe" append shop.mv "$tmp/e.ndjson" >/dev/null
[ "$("$floe" scan shop.mv | wc -l)" = 2 ] || fail "shop.mv does not read after its moves"

server_alive
openapi_check
[ $fails = 0 ] || fail "$fails cases failed"
echo "$name: ok"
