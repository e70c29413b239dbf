#!/usr/bin/env bash
# rest_confine.sh - what `floe catalog serve --tokens` keeps a token to: its grants, and
# tables' identities (issue 21's authorization findings), by curl:
#
#  1. grants are matched on the namespace levels and the table name: a table name with a
#     '.' is refused (create, register, rename, a staged create's commit), and a table
#     "x.y" of namespace shop already in the catalog is not reached by the grants
#     shop.x.* or shop.x.y (load, commit, drop: 403), only by shop.* or *;
#  2. assign-uuid on an existing table with another uuid is a 400 and the uuid stays; the
#     same uuid again changes nothing;
#  3. the namespace marker `exists` is not shown and cannot be set or removed through the
#     properties route (400), and removing a namespace's last property leaves it in place;
#  4. locations (docs/REST.md "Locations"): a table's location given by create,
#     set-location (a commit, a transaction, a staged create) lies inside its namespace's
#     folder and outside a child namespace's, absolute without '..' (else 400, nothing
#     written); register opens only metadata inside the namespace's folder, quotes no file
#     content, and a refused register with overwrite leaves the pointer; a namespace's
#     location property is its own folder or inside it.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v curl >/dev/null || { echo "rest_confine: curl missing, skipped"; exit 77; }
command -v python3 >/dev/null || { echo "rest_confine: python3 missing, skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "rest_confine: sqlite3 missing, skipped"; exit 77; }
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_CATALOG_TOKEN \
  FLOE_CATALOG_CREDENTIAL || true

tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "rest_confine: FAIL: $*" >&2
  [ -f "$tmp/server.log" ] && tail -20 "$tmp/server.log" | sed 's/^/  server: /' >&2
  exit 1
}
jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

cat > "$tmp/tokens.conf" <<'CONF'
[token ops]
secret = secret-ops-0001
grants = *
[token shop]
secret = secret-shop-001
grants = shop.*
[token sx]
secret = secret-sx-00001
grants = shop.x.*, shop.x.y
CONF
mkdir -p "$tmp/wh"
db=$tmp/wh/catalog.db
chmod 600 "$tmp/tokens.conf"  # it holds secrets: catalog serve refuses one others may read
FLOE_CATALOG_URI="$db" FLOE_WAREHOUSE="$tmp/wh" \
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" --tokens "$tmp/tokens.conf" \
  2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the server did not start"
base=http://127.0.0.1:$(cat "$tmp/port")

# req TOKEN METHOD PATH [BODY]: the status; the body in $tmp/body
req() {
  local tok=$1 m=$2 p=$3
  shift 3
  curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $tok" -X "$m" "$base$p" \
    ${1+-d "$1"}
}
expect() { # expect STATUS TOKEN METHOD PATH [BODY]
  local want=$1 got
  shift
  got=$(req "$@")
  [ "$got" = "$want" ] || fail "$2 $3 (token $1) -> $got, expected $want: $(cat "$tmp/body")"
}
S='{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}'
OPS=secret-ops-0001 SHOP=secret-shop-001 SX=secret-sx-00001

expect 200 $OPS POST /v1/namespaces '{"namespace":["shop"]}'
expect 200 $OPS POST /v1/namespaces '{"namespace":["shop","x"]}'
expect 200 $OPS POST /v1/namespaces '{"namespace":["secret"]}'

# ---------------------------------------------------------------------------------------
# 1. dotted table names
# ---------------------------------------------------------------------------------------
expect 400 $OPS POST /v1/namespaces/shop/tables "{\"name\":\"x.y\",\"schema\":$S}"
grep -q "holds a '.'" "$tmp/body" || fail "dotted name refusal: $(cat "$tmp/body")"
expect 400 $OPS POST /v1/namespaces/shop/tables/x.y \
  "{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[{\"action\":\"add-schema\",\"schema\":$S}]}"
expect 200 $OPS POST /v1/namespaces/shop/tables "{\"name\":\"t\",\"schema\":$S}"
expect 400 $OPS POST /v1/tables/rename \
  '{"source":{"namespace":["shop"],"name":"t"},"destination":{"namespace":["shop"],"name":"x.y"}}'
expect 200 $OPS GET /v1/namespaces/shop/tables/t
meta=$(jget '["metadata-location"]' < "$tmp/body")
expect 400 $OPS POST /v1/namespaces/shop/register "{\"name\":\"a.b\",\"metadata-location\":\"$meta\"}"
# a dotted table already in the catalog (made by another writer): only shop.* and * reach it
sqlite3 "$db" "INSERT INTO iceberg_tables SELECT catalog_name, table_namespace, 'x.y',
  metadata_location, previous_metadata_location, iceberg_type FROM iceberg_tables WHERE table_name = 't'" ||
  fail "could not add the dotted table"
expect 200 $OPS GET /v1/namespaces/shop/tables/x.y
expect 403 $SX GET /v1/namespaces/shop/tables/x.y
expect 403 $SX POST /v1/namespaces/shop/tables/x.y \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"pwned":"1"}}]}'
expect 403 $SX DELETE /v1/namespaces/shop/tables/x.y
expect 200 $SHOP GET /v1/namespaces/shop/tables/x.y
# the grants still reach what they name
expect 200 $SX POST /v1/namespaces/shop%1Fx/tables "{\"name\":\"y\",\"schema\":$S}"
expect 200 $SX GET /v1/namespaces/shop%1Fx/tables/y
expect 403 $SX GET /v1/namespaces/shop/tables/t
sqlite3 "$db" "DELETE FROM iceberg_tables WHERE table_name = 'x.y'"

# ---------------------------------------------------------------------------------------
# 2. assign-uuid on an existing table
# ---------------------------------------------------------------------------------------
expect 200 $OPS POST /v1/namespaces/secret/tables "{\"name\":\"s\",\"schema\":$S}"
su=$(jget '["metadata"]["table-uuid"]' < "$tmp/body")
expect 200 $SHOP GET /v1/namespaces/shop/tables/t
tu=$(jget '["metadata"]["table-uuid"]' < "$tmp/body")
expect 400 $SHOP POST /v1/namespaces/shop/tables/t \
  "{\"requirements\":[],\"updates\":[{\"action\":\"assign-uuid\",\"uuid\":\"$su\"}]}"
grep -q "reassign" "$tmp/body" || fail "assign-uuid refusal: $(cat "$tmp/body")"
expect 200 $SHOP GET /v1/namespaces/shop/tables/t
[ "$(jget '["metadata"]["table-uuid"]' < "$tmp/body")" = "$tu" ] || fail "the uuid changed"
expect 200 $SHOP POST /v1/namespaces/shop/tables/t \
  "{\"requirements\":[],\"updates\":[{\"action\":\"assign-uuid\",\"uuid\":\"$tu\"}]}"
[ "$(jget '["metadata"]["table-uuid"]' < "$tmp/body")" = "$tu" ] || fail "the uuid changed"

# ---------------------------------------------------------------------------------------
# 3. the namespace marker
# ---------------------------------------------------------------------------------------
expect 200 $OPS POST /v1/namespaces '{"namespace":["ex1"]}'
[ "$(jget '["properties"]' < "$tmp/body")" = "{}" ] || fail "the marker is shown: $(cat "$tmp/body")"
expect 400 $OPS POST /v1/namespaces/ex1/properties '{"removals":["exists"]}'
expect 400 $OPS POST /v1/namespaces/ex1/properties '{"updates":{"exists":"false"}}'
expect 200 $OPS GET /v1/namespaces/ex1
expect 200 $OPS POST /v1/namespaces '{"namespace":["ex2"],"properties":{"owner":"me"}}'
expect 200 $OPS POST /v1/namespaces/ex2/properties '{"removals":["owner"]}'
expect 200 $OPS GET /v1/namespaces/ex2
expect 204 $OPS DELETE /v1/namespaces/ex2

# ---------------------------------------------------------------------------------------
# 4. locations: inside the namespace's folder, outside its children's; register too
# ---------------------------------------------------------------------------------------
wh=file://$tmp/wh
SPEC='{"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":-1},{"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":-1}'
expect 200 $OPS GET /v1/namespaces/secret/tables/s
sloc=$(jget '["metadata"]["location"]' < "$tmp/body")
smeta=$(jget '["metadata-location"]' < "$tmp/body")
for loc in "file://$tmp/evil" /etc/evil "$wh/secret/zzz" "$wh/shop/x/zzz" "$wh/shop" "$wh/shop/../secret/z" \
  "$sloc" "shop/rel"; do
  expect 400 $SHOP POST /v1/namespaces/shop/tables "{\"name\":\"atk\",\"schema\":$S,\"location\":\"$loc\"}"
  expect 400 $SHOP POST /v1/namespaces/shop/tables/t \
    "{\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$loc\"}]}"
  expect 400 $SHOP POST /v1/namespaces/shop/tables/st \
    "{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[{\"action\":\"add-schema\",\"schema\":$S},{\"action\":\"set-current-schema\",\"schema-id\":-1},$SPEC,{\"action\":\"set-location\",\"location\":\"$loc\"}]}"
  expect 400 $OPS POST /v1/transactions/commit \
    "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"t\"},\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$loc\"}]}]}"
done
[ ! -e "$tmp/evil" ] || fail "a refused location was written"
expect 200 $SHOP GET /v1/namespaces/shop/tables/t
[ "$(jget '["metadata"]["location"]' < "$tmp/body")" = "$wh/shop/t" ] || fail "t moved: $(cat "$tmp/body")"
expect 404 $SHOP GET /v1/namespaces/shop/tables/atk
expect 200 $SHOP POST /v1/namespaces/shop/tables "{\"name\":\"ok\",\"schema\":$S,\"location\":\"$wh/shop/ok-1\"}"
expect 200 $SHOP POST /v1/namespaces/shop/tables/ok \
  "{\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$wh/shop/ok-2\"}]}"
expect 200 $SHOP POST /v1/namespaces/shop/tables/st \
  "{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[{\"action\":\"add-schema\",\"schema\":$S},{\"action\":\"set-current-schema\",\"schema-id\":-1},$SPEC,{\"action\":\"set-location\",\"location\":\"$wh/shop/st-1\"}]}"
expect 204 $OPS POST /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"ok\"},\"requirements\":[],\"updates\":[{\"action\":\"set-location\",\"location\":\"$wh/shop/ok-3\"}]}]}"
# register: nothing outside the namespace's folder is opened, and no file content is quoted
echo "root:secret-content" > "$tmp/wh/shop/notjson.json"
for m in /etc/hostname "$tmp/tokens.conf" "$smeta" aaaa "/nonexistent/$(head -c 3000 /dev/zero | tr '\0' a)"; do
  expect 400 $SHOP POST /v1/namespaces/shop/register "{\"name\":\"r\",\"metadata-location\":\"$m\"}"
done
expect 400 $SHOP POST /v1/namespaces/shop/register "{\"name\":\"r\",\"metadata-location\":\"$tmp/wh/shop/notjson.json\"}"
! grep -q "secret-content" "$tmp/body" || fail "register quoted the file: $(cat "$tmp/body")"
expect 200 $SHOP GET /v1/namespaces/shop/tables/t
tmeta=$(jget '["metadata-location"]' < "$tmp/body")
for m in /nonexistent/x.metadata.json main "$tmp/wh/shop/t/metadata/nope.metadata.json"; do
  expect 400 $SHOP POST /v1/namespaces/shop/register \
    "{\"name\":\"t\",\"metadata-location\":\"$m\",\"overwrite\":true}"
done
expect 200 $SHOP GET /v1/namespaces/shop/tables/t
[ "$(jget '["metadata-location"]' < "$tmp/body")" = "$tmeta" ] || fail "a refused register moved t"
# a namespace's location property: its own folder or inside it
expect 400 $OPS POST /v1/namespaces "{\"namespace\":[\"n2\"],\"properties\":{\"location\":\"$wh/secret\"}}"
expect 200 $OPS POST /v1/namespaces "{\"namespace\":[\"n2\"],\"properties\":{\"location\":\"$wh/n2/data\"}}"
expect 400 $SHOP POST /v1/namespaces/shop/properties "{\"updates\":{\"location\":\"$wh/secret\"}}"
expect 400 $SHOP POST /v1/namespaces/shop/properties "{\"updates\":{\"location\":\"/etc\"}}"
expect 200 $SHOP POST /v1/namespaces/shop/properties "{\"updates\":{\"location\":\"$wh/shop/all\"}}"
expect 200 $SHOP POST /v1/namespaces/shop/tables "{\"name\":\"in_all\",\"schema\":$S}"
[ "$(jget '["metadata"]["location"]' < "$tmp/body")" = "$wh/shop/all/in_all" ] || fail "in_all: $(cat "$tmp/body")"
# the files of secret.s are all still there
[ -n "$(ls "$tmp/wh/secret/s/metadata")" ] || fail "secret.s lost its files"

kill "$pid"
wait "$pid" || fail "the server did not stop cleanly"
pid=
echo "rest_confine: ok"
