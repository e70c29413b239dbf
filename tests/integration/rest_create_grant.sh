#!/usr/bin/env bash
# rest_create_grant.sh - creating a table through `floe catalog serve --tokens` needs the
# create grant on its namespace (ns.* or *), whichever route makes it (adversary finding
# on issue 21, isolation): a token granted one table only (shop.t) made new tables by a
# commit with an assert-create requirement (a staged create's commit), where
# POST .../tables answered 403.
#  - a commit with assert-create on a table that does not exist: 403 ForbiddenException
#    with a table grant (shop.t, shop.other), nothing made; with shop.* 200;
#  - transactions/commit never creates (404 for a table that does not exist);
#  - the table grant still commits to its existing table (200) and is refused
#    POST .../tables (403) as before.
set -euo pipefail
name=rest_create_grant
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }
tokens='[token ops]
secret = secret-ops-0001
grants = *
[token one]
secret = secret-one-0001
grants = shop.t, shop.fresh
[token ns]
secret = secret-nsg-0001
grants = shop.*'
serve_checked "$tokens"
OPS=secret-ops-0001 ONE=secret-one-0001 NSG=secret-nsg-0001
S='{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}'
create_body=$(python3 -c '
import json, sys
u = [{"action": "add-schema", "schema": json.loads(sys.argv[1])}, {"action": "set-current-schema", "schema-id": -1},
     {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}}, {"action": "set-default-spec", "spec-id": -1},
     {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
     {"action": "set-default-sort-order", "sort-order-id": -1}]
print(json.dumps({"requirements": [{"type": "assert-create"}], "updates": u}))' "$S")

expect 200 $OPS POST /v1/namespaces '{"namespace":["shop"]}'
expect 200 $OPS POST /v1/namespaces/shop/tables "{\"name\":\"t\",\"schema\":$S}"

# a table grant creates nothing, by any route
expect 403 $ONE POST /v1/namespaces/shop/tables "{\"name\":\"fresh\",\"schema\":$S}"
expect 403 $ONE POST /v1/namespaces/shop/tables/fresh "$create_body"
grep -q ForbiddenException "$tmp/body" || fail "not a ForbiddenException: $(cat "$tmp/body")"
expect 404 $OPS GET /v1/namespaces/shop/tables/fresh
expect 403 $ONE POST /v1/namespaces/shop/tables/fresh "$create_body"
expect 404 $ONE POST /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"fresh\"},$(echo "$create_body" | sed 's/^{//; s/}$//')}]}"
expect 404 $OPS GET /v1/namespaces/shop/tables/fresh
[ ! -e "$tmp/wh/shop/fresh" ] || fail "a refused create wrote files: $(find "$tmp/wh/shop/fresh")"
# on the table it is granted, a commit works as before
expect 200 $ONE POST /v1/namespaces/shop/tables/t \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"one"}}]}'
# the namespace grant creates by either route
expect 200 $NSG POST /v1/namespaces/shop/tables/fresh "$create_body"
expect 200 $NSG POST /v1/namespaces/shop/tables "{\"name\":\"fresh2\",\"schema\":$S}"
expect 200 $ONE GET /v1/namespaces/shop/tables/fresh
server_alive
openapi_check
echo "$name: ok"
