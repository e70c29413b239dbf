#!/usr/bin/env bash
# rest_poor_errors.sh - `floe catalog serve` answers ten kinds of odd request with a clear
# error of the spec's ErrorModel, or takes them harmlessly (issue 21, adversary F6):
#  1. a create whose local location has a folder name over 255 bytes (NAME_MAX), or is
#     over 768 bytes long: 400 naming the limit (was 500 "File name too long");
#  2. a namespace of 100 levels: 400 naming the limit of 64 (was "must be an array of
#     strings"), by body and by path;
#  3. a rename of a table onto itself: 409 AlreadyExistsException (the destination
#     exists, as the spec says), the table untouched (was 204);
#  4. duplicate removals (remove-properties naming a key twice, remove-snapshots naming a
#     snapshot twice, remove-snapshot-ref twice): taken once, the table readable;
#  5. add-schema changing a field's type long -> string: 400 naming the field and both
#     types (was accepted, and the table's files no longer matched its schema); int ->
#     long is taken;
#  6. write.format.default=orc (set-properties or create): 400, floe writes Parquet only;
#  7. a query value holding %00 (pageToken, purgeRequested): 400 naming the parameter
#     (was read as absent: a purgeRequested=%00 dropped the table without a purge);
#  8. a ref name with a control character: 400 (was stored);
#  9. namespaces _landing, _quarantine, _wal (floe serve's folders in the warehouse):
#     400 (were created, their folder floe serve's own);
# 10. the commit of a staged create after its namespace was dropped: 404
#     NoSuchNamespaceException naming it (was 400), nothing written.
set -euo pipefail
name=rest_poor_errors
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

shop_table pe 2
"$floe" namespace create gone >/dev/null
serve_table pe
ns_path=/v1/namespaces/shop/tables
err_type() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["type"])' "$tmp/body" 2>/dev/null || true; }

# 1. long locations
long=$(python3 -c 'print("x" * 300)')
expect_soft "create with a 300-byte folder name" 400 "at most 255" POST $ns_path \
  "{\"name\":\"long1\",\"schema\":$id_schema,\"location\":\"$FLOE_WAREHOUSE/shop/$long\"}"
deep=$(python3 -c 'print("/".join(["y" * 200] * 5))')
expect_soft "create with a 1000-byte location" 400 "at most 768" POST $ns_path \
  "{\"name\":\"long2\",\"schema\":$id_schema,\"location\":\"$FLOE_WAREHOUSE/shop/$deep\"}"
for t in long1 long2; do
  [ "$(req $T GET $ns_path/$t)" = 404 ] || soft "table $t exists after a refused create"
done

# 2. a namespace of 100 levels
levels=$(python3 -c 'import json; print(json.dumps(["l%d" % i for i in range(100)]))')
expect_soft "create a 100-level namespace" 400 "at most 64" POST /v1/namespaces "{\"namespace\":$levels}"
seg=$(python3 -c 'print("%1F".join("l%d" % i for i in range(100)))')
expect_soft "load a 100-level namespace" 400 "at most 64" GET "/v1/namespaces/$seg"

# 3. a rename onto itself
before=$(loaded "$tmp/pe.json" "d['metadata-location']")
expect_soft "rename onto itself" 409 "onto itself" POST /v1/tables/rename \
  '{"source":{"namespace":["shop"],"name":"pe"},"destination":{"namespace":["shop"],"name":"pe"}}'
[ "$(err_type)" = AlreadyExistsException ] || soft "rename onto itself: not AlreadyExistsException: $(head -c 300 "$tmp/body")"
[ "$(req $T GET $tbl)" = 200 ] && cp "$tmp/body" "$tmp/after3.json" || soft "table pe gone after a rename onto itself"
[ "$(loaded "$tmp/after3.json" "d['metadata-location']")" = "$before" ] || soft "a rename onto itself changed the table"

# 4. duplicate removals
upd() { printf '{"requirements":[],"updates":[%s]}' "$1"; }
expect_soft "set a, b" 200 metadata-location POST $tbl "$(upd '{"action":"set-properties","updates":{"a":"1","b":"2"}}')"
expect_soft "remove a twice" 200 metadata-location POST $tbl "$(upd '{"action":"remove-properties","removals":["a","a"]}')"
cp "$tmp/body" "$tmp/r4.json"
[ "$(loaded "$tmp/r4.json" "('a' in m['properties'], m['properties'].get('b'))")" = "(False, '2')" ] ||
  soft "remove-properties a, a: $(loaded "$tmp/r4.json" "m['properties']")"
sid=$(loaded "$tmp/pe.json" "sorted(m['snapshots'], key=lambda s: s['sequence-number'])[0]['snapshot-id']")
expect_soft "remove a snapshot twice" 200 metadata-location POST $tbl \
  "$(upd "{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$sid,$sid]},{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$sid]}")"
cp "$tmp/body" "$tmp/r4.json"
[ "$(loaded "$tmp/r4.json" "[s['snapshot-id'] for s in m['snapshots']].count($sid)")" = 0 ] || soft "snapshot $sid still there"
[ "$(loaded "$tmp/r4.json" "len(m['snapshots'])")" = 1 ] || soft "remove-snapshots removed other snapshots"
main=$(loaded "$tmp/r4.json" "m['current-snapshot-id']")
expect_soft "remove a tag twice" 200 metadata-location POST $tbl \
  "$(upd "{\"action\":\"set-snapshot-ref\",\"ref-name\":\"t1\",\"type\":\"tag\",\"snapshot-id\":$main},{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"t1\"},{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"t1\"}")"
cp "$tmp/body" "$tmp/r4.json"
[ "$(loaded "$tmp/r4.json" "sorted(m['refs'])")" = "['main']" ] || soft "refs after removing t1 twice: $(loaded "$tmp/r4.json" "m['refs']")"
n=$(FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db "$floe" scan shop.pe 2>"$tmp/scan.err" | wc -l) || true
[ "$n" = 20 ] || soft "scan after the removals: $n rows, want 20: $(head -3 "$tmp/scan.err")"

# 5. add-schema: long -> string refused, int -> long taken
[ "$(req $T GET $tbl)" = 200 ] && cp "$tmp/body" "$tmp/b5.json"
s5=$(loaded "$tmp/b5.json" "d['metadata-location']")
expect_soft "add-schema id long -> string" 400 "cannot become string" POST $tbl \
  "$(upd '{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"id","type":"string","required":false}]}},{"action":"set-current-schema","schema-id":-1}')"
grep -q BadRequestException "$tmp/body" || soft "add-schema long -> string: not a BadRequestException"
[ "$(req $T GET $tbl)" = 200 ] && cp "$tmp/body" "$tmp/a5.json"
[ "$(loaded "$tmp/a5.json" "d['metadata-location']")" = "$s5" ] || soft "a refused add-schema changed the table"
expect_soft "add-schema: a struct field as long" 400 "cannot become" POST $tbl \
  "$(upd '{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"id","type":{"type":"struct","fields":[{"id":2,"name":"x","type":"long","required":false}]},"required":false}]}}')"
int_schema='{"type":"struct","fields":[{"id":1,"name":"n","type":"int","required":false},{"id":2,"name":"d","type":"date","required":false}]}'
expect_soft "create a table with an int column" 200 metadata-location POST $ns_path "{\"name\":\"ints\",\"schema\":$int_schema}"
expect_soft "add-schema n int -> long" 200 metadata-location POST $ns_path/ints \
  "$(upd '{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"n","type":"long","required":false},{"id":2,"name":"d","type":"date","required":false}]}},{"action":"set-current-schema","schema-id":-1}')"
expect_soft "add-schema d date -> timestamp on v2" 400 "cannot become timestamp" POST $ns_path/ints \
  "$(upd '{"action":"add-schema","schema":{"type":"struct","schema-id":2,"fields":[{"id":1,"name":"n","type":"long","required":false},{"id":2,"name":"d","type":"timestamp","required":false}]}}')"
expect_soft "add-schema n long -> int" 400 "cannot become int" POST $ns_path/ints \
  "$(upd '{"action":"add-schema","schema":{"type":"struct","schema-id":2,"fields":[{"id":1,"name":"n","type":"int","required":false},{"id":2,"name":"d","type":"date","required":false}]}}')"

# 6. write.format.default
expect_soft "write.format.default=orc" 400 "write.format.default=orc" POST $tbl \
  "$(upd '{"action":"set-properties","updates":{"write.format.default":"orc"}}')"
expect_soft "write.delete.format.default=avro" 400 "write.delete.format.default=avro" POST $tbl \
  "$(upd '{"action":"set-properties","updates":{"write.delete.format.default":"avro"}}')"
expect_soft "create with write.format.default=orc" 400 "write.format.default=orc" POST $ns_path \
  "{\"name\":\"orc\",\"schema\":$id_schema,\"properties\":{\"write.format.default\":\"orc\"}}"
expect_soft "write.format.default=parquet" 200 metadata-location POST $tbl \
  "$(upd '{"action":"set-properties","updates":{"write.format.default":"parquet"}}')"

# 7. %00 in a query value
expect_soft "pageToken=%00" 400 "pageToken" GET "/v1/namespaces?pageToken=%00"
expect_soft "purgeRequested=%00" 400 "purgeRequested" DELETE "$tbl?purgeRequested=%00"
[ "$(req $T GET $tbl)" = 200 ] || soft "table pe dropped by a DELETE with purgeRequested=%00"
expect_soft "pageSize=%FF" 400 "pageSize" GET "/v1/namespaces?pageSize=%FF"

# 8. a ref name with a control character
expect_soft "ref name with \\u0001" 400 "control character" POST $tbl \
  "$(upd "{\"action\":\"set-snapshot-ref\",\"ref-name\":\"a\\u0001b\",\"type\":\"tag\",\"snapshot-id\":$main}")"
expect_soft "ref name with a newline" 400 "control character" POST $tbl \
  "$(upd "{\"action\":\"set-snapshot-ref\",\"ref-name\":\"a\\nb\",\"type\":\"branch\",\"snapshot-id\":$main}")"

# 9. floe serve's folders as namespaces
for n in _landing _quarantine _wal; do
  expect_soft "namespace $n" 400 "floe keeps for itself" POST /v1/namespaces "{\"namespace\":[\"$n\"]}"
  [ "$(req $T GET "/v1/namespaces/$n")" = 404 ] || soft "namespace $n exists after a refused create"
done
expect_soft "namespace _landing2" 200 _landing2 POST /v1/namespaces '{"namespace":["_landing2"]}'
expect_soft "namespace shop._wal" 200 _wal POST /v1/namespaces '{"namespace":["shop","_wal"]}'

# 10. a staged create committed after its namespace was dropped
expect_soft "stage gone.st" 200 metadata POST /v1/namespaces/gone/tables \
  "{\"name\":\"st\",\"schema\":$id_schema,\"stage-create\":true}"
[ "$(req $T DELETE /v1/namespaces/gone)" = 204 ] || soft "drop gone: $(head -c 300 "$tmp/body")"
create_updates="{\"action\":\"assign-uuid\",\"uuid\":\"9d0c5c1e-0a4e-4a57-9c53-2f0a3bd1e0d1\"},{\"action\":\"upgrade-format-version\",\"format-version\":2},{\"action\":\"add-schema\",\"schema\":$id_schema},{\"action\":\"set-current-schema\",\"schema-id\":-1},{\"action\":\"add-spec\",\"spec\":{\"spec-id\":0,\"fields\":[]}},{\"action\":\"set-default-spec\",\"spec-id\":-1},{\"action\":\"add-sort-order\",\"sort-order\":{\"order-id\":0,\"fields\":[]}},{\"action\":\"set-default-sort-order\",\"sort-order-id\":-1}"
for loc in "" ",{\"action\":\"set-location\",\"location\":\"$FLOE_WAREHOUSE/gone/st\"}"; do
  expect_soft "commit the staged gone.st${loc:+ with set-location}" 404 "namespace gone does not exist" \
    POST /v1/namespaces/gone/tables/st \
    "{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[$create_updates$loc]}"
  [ "$(err_type)" = NoSuchNamespaceException ] || soft "staged commit: not NoSuchNamespaceException: $(head -c 300 "$tmp/body")"
done
[ ! -e "$FLOE_WAREHOUSE/gone" ] || soft "files left for the staged create: $(find "$FLOE_WAREHOUSE/gone" | head -3)"

server_alive
openapi_check
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
