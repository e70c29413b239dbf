#!/usr/bin/env bash
# rest_spec_binding.sh - `floe catalog serve` refuses a commit whose new partition spec or
# sort order does not bind to the schema that is current once all its updates are made
# (adversary finding on issue 21): 400 naming the field, nothing committed, for
#  - add-spec on a column, then add-schema dropping it and set-current-schema;
#  - add-sort-order on a column made default, then set-current-schema to a schema without it;
#  - a transform the column's type does not take: bucket on a boolean, truncate on a
#    double, day on a long (spec and sort order), also in a transaction and a staged
#    create's commit;
# while a commit adding a column and a spec on it (add-schema, add-spec, set-current-
# schema: the spec binds only to the final schema) and a valid bucket are accepted.
name=rest_spec_binding
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: SKIP: curl missing"; exit 77; }
fails=0
fail() { echo "$name: FAIL: $*" >&2; fails=$((fails + 1)); }
serve_checked ""
base=$base/v1
post() { curl -s -o "$tmp/body" -w '%{http_code}' -X POST -H 'Content-Type: application/json' "$base/$1" -d "$2"; }
fields='[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"flag","type":"boolean","required":false},{"id":3,"name":"price","type":"double","required":false},{"id":4,"name":"name","type":"string","required":false}]'
[ "$(post namespaces '{"namespace":["shop"]}')" = 200 ] || fail "namespace: $(cat "$tmp/body")"
[ "$(post namespaces/shop/tables "{\"name\":\"t\",\"schema\":{\"type\":\"struct\",\"schema-id\":0,\"fields\":$fields}}")" = 200 ] ||
  fail "create: $(cat "$tmp/body")"
loc() { curl -s "$base/namespaces/shop/tables/t" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata-location"])'; }
loc0=$(loc)
# the schema without column 4 (name)
dropped='{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"flag","type":"boolean","required":false},{"id":3,"name":"price","type":"double","required":false}]}'
spec() { printf '{"action":"add-spec","spec":{"spec-id":1,"fields":[{"name":"%s","transform":"%s","source-id":%s,"field-id":1000}]}}' "$@"; }
order() { printf '{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"transform":"%s","source-id":%s,"direction":"asc","null-order":"nulls-first"}]}}' "$@"; }
commit() { printf '{"requirements":[],"updates":[%s]}' "$1"; }

# WHAT UPDATES WANT...: a refused commit (400 BadRequestException naming every WANT)
refused() {
  local what=$1 updates=$2
  shift 2
  local code
  code=$(post namespaces/shop/tables/t "$(commit "$updates")")
  [ "$code" = 400 ] || { fail "$what: $code, want 400: $(head -c 300 "$tmp/body")"; return; }
  grep -q '"type":"BadRequestException"' "$tmp/body" || fail "$what: $(cat "$tmp/body")"
  for w in "$@"; do grep -qF -- "$w" "$tmp/body" || fail "$what: no '$w' in $(cat "$tmp/body")"; done
}
refused "spec on a column the new current schema drops" \
  "$(spec name_part identity 4),{\"action\":\"set-default-spec\",\"spec-id\":-1},{\"action\":\"add-schema\",\"schema\":$dropped},{\"action\":\"set-current-schema\",\"schema-id\":-1}" \
  'name_part' 'source id 4'
refused "sort order on a column the new current schema drops" \
  "$(order identity 4),{\"action\":\"set-default-sort-order\",\"sort-order-id\":-1},{\"action\":\"add-schema\",\"schema\":$dropped},{\"action\":\"set-current-schema\",\"schema-id\":-1}" \
  'sort order' 'source id 4'
refused "bucket on a boolean" "$(spec flag_bucket 'bucket[4]' 2)" 'flag_bucket' 'bucket[4]' 'flag'
refused "truncate on a double" "$(spec price_trunc 'truncate[10]' 3)" 'price_trunc' 'truncate[10]' 'price'
refused "day on a long" "$(spec id_day day 1)" 'id_day' 'day'
refused "sort order bucket on a boolean" "$(order 'bucket[4]' 2)" 'sort order' 'bucket[4]' 'flag'
refused "spec on a column id no schema has" "$(spec ghost identity 42)" 'ghost' 'source id 42'
[ "$(loc)" = "$loc0" ] || fail "a refused commit moved the table"
# in a transaction: 400 and nothing moves
tx="{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"t\"},\"requirements\":[],\"updates\":[$(spec flag_bucket 'bucket[4]' 2)]}]}"
code=$(post transactions/commit "$tx")
[ "$code" = 400 ] && grep -q flag_bucket "$tmp/body" || fail "transaction: $code $(cat "$tmp/body")"
[ "$(loc)" = "$loc0" ] || fail "a refused transaction moved the table"
# a staged create whose commit adds a spec the schema does not take
[ "$(post namespaces/shop/tables "{\"name\":\"staged\",\"stage-create\":true,\"schema\":{\"type\":\"struct\",\"schema-id\":0,\"fields\":$fields}}")" = 200 ] ||
  fail "stage-create: $(cat "$tmp/body")"
staged="{\"requirements\":[{\"type\":\"assert-create\"}],\"updates\":[{\"action\":\"assign-uuid\",\"uuid\":\"7f0c6d6e-1111-4a2b-9c3d-0123456789ab\"},{\"action\":\"upgrade-format-version\",\"format-version\":2},{\"action\":\"add-schema\",\"schema\":{\"type\":\"struct\",\"schema-id\":0,\"fields\":$fields}},{\"action\":\"set-current-schema\",\"schema-id\":-1},$(spec flag_bucket 'bucket[4]' 2),{\"action\":\"set-default-spec\",\"spec-id\":-1},{\"action\":\"add-sort-order\",\"sort-order\":{\"order-id\":0,\"fields\":[]}},{\"action\":\"set-default-sort-order\",\"sort-order-id\":-1}]}"
code=$(post namespaces/shop/tables/staged "$staged")
[ "$code" = 400 ] && grep -q flag_bucket "$tmp/body" || fail "staged create's commit: $code $(cat "$tmp/body")"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/namespaces/shop/tables/staged")
[ "$code" = 404 ] || fail "the refused staged create exists: $code"
# accepted: a new column and a spec on it in one commit (binds to the final schema only),
# then a bucket on a long
added='{"type":"struct","schema-id":1,"fields":'"${fields%]}"',{"id":5,"name":"region","type":"string","required":false}]}'
code=$(post namespaces/shop/tables/t "$(commit "{\"action\":\"add-schema\",\"schema\":$added},$(spec region identity 5),{\"action\":\"set-current-schema\",\"schema-id\":-1},{\"action\":\"set-default-spec\",\"spec-id\":-1}")")
[ "$code" = 200 ] || fail "a spec on a column added in the same commit: $code $(cat "$tmp/body")"
code=$(post namespaces/shop/tables/t "$(commit "$(spec id_bucket 'bucket[8]' 1),$(order 'bucket[8]' 1)")")
[ "$code" = 200 ] || fail "bucket on a long: $code $(cat "$tmp/body")"
"$floe" table describe shop.t > "$tmp/describe" 2>&1 || fail "describe after the commits: $(cat "$tmp/describe")"
server_alive
[ "$fails" = 0 ] || exit 1
openapi_check
echo "$name: ok"
