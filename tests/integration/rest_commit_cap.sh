#!/usr/bin/env bash
# rest_commit_cap.sh - adversary finding G7 on issue 21 (adv21g, unbounded resource): one
# table commit of 16,000 add-sort-order updates (2.6 MiB) ran for minutes holding one of
# `floe catalog serve`'s catalog handles (each added order is compared with every order
# there). A commit now takes at most 1,000 updates and 1,000 requirements, a transaction
# 10,000 in all over its table-changes (400 naming the count and the cap, nothing changed):
#  1. 1,001 add-sort-orders: 400 naming 1001 and 1000, the table's sort orders unchanged;
#  2. 16,000 add-sort-orders: 400 (the body the adversary sent);
#  3. 1,001 requirements: 400;
#  4. 1,000 add-sort-orders: 200, the orders added;
#  5. a transaction of 11 tables x 1,000 updates: 400 naming 10000, no table changed.
name=rest_commit_cap
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

wh=$tmp/wh
S=$id_schema
open_shop

# body FILE N_UPDATES N_REQUIREMENTS [TABLES]: a commit body (TABLES: a transaction of that
# many tables c0.. each with the updates)
body() {
  python3 - "$@" <<'PY'
import json, sys
path, nu, nr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tables = int(sys.argv[4]) if len(sys.argv) > 4 else 0
up = [{"action": "add-sort-order", "sort-order": {"order-id": i + 1, "fields": [
    {"source-id": 1, "transform": "bucket[%d]" % (i + 2), "direction": "asc",
     "null-order": "nulls-first"}]}} for i in range(nu)]
rq = [{"type": "assert-current-schema-id", "current-schema-id": 0} for _ in range(nr)]
if tables:
    doc = {"table-changes": [{"identifier": {"namespace": ["shop"], "name": "c%d" % t},
                              "requirements": rq, "updates": up} for t in range(tables)]}
else:
    doc = {"requirements": rq, "updates": up}
json.dump(doc, open(path, "w"))
PY
}

# post WHAT STATUS TEXT PATH FILE: POST FILE; a soft failure unless the answer is STATUS
# holding TEXT (within 120 s: the binary before the fix is still busy with case 2 then)
post() {
  local what=$1 want=$2 text=$3 path=$4 file=$5 got
  got=$(curl -s -m 120 -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -X POST "$base$path" --data-binary "@$file" || true)
  echo "$name: $what: $got"
  if [ "$got" != "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/body"; }; then
    soft "$what: $got (expected $want '$text'): $(head -c 300 "$tmp/body")"
  fi
}
orders() { # orders TABLE: how many sort orders the table's metadata holds
  expect 200 $T GET /v1/namespaces/shop/tables/$1
  loaded "$tmp/body" 'len(m["sort-orders"])'
}

for t in o c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10; do
  expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"$t\",\"schema\":$S}"
done
before=$(orders o)

body "$tmp/u1001.json" 1001 0
post "1,001 updates" 400 "has 1001 updates; at most 1000" /v1/namespaces/shop/tables/o "$tmp/u1001.json"
[ "$(orders o)" = "$before" ] || soft "1,001 updates: the sort orders changed"

body "$tmp/u16000.json" 16000 0
post "16,000 updates" 400 "has 16000 updates; at most 1000" /v1/namespaces/shop/tables/o "$tmp/u16000.json"

body "$tmp/r1001.json" 0 1001
post "1,001 requirements" 400 "has 1001 requirements; at most 1000" /v1/namespaces/shop/tables/o "$tmp/r1001.json"

body "$tmp/u1000.json" 1000 0
post "1,000 updates" 200 "" /v1/namespaces/shop/tables/o "$tmp/u1000.json"
[ "$(orders o)" = "$((before + 1000))" ] || soft "1,000 updates: $(orders o) sort orders, not $((before + 1000))"

body "$tmp/tx.json" 1000 0 11
post "11 x 1,000 updates in a transaction" 400 "more than 10000 updates and requirements" /v1/transactions/commit "$tmp/tx.json"
for t in c0 c10; do
  [ "$(orders $t)" = "$before" ] || soft "the transaction changed shop.$t"
done

server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
