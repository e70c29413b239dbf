#!/usr/bin/env bash
# rest_idem_recreated.sh - an Idempotency-Key replayed after the table its change was made
# to was purged and another table created under the same name must not answer as if the
# old request had been applied to the new table (issue 21): the replay fell back to "the
# table as it is now" and gave the new table's state, 200, for a commit and a create that
# never touched it. The record carries the table-uuid now:
#  1. a keyed commit to shop.t, t purged and created anew: the replay is 404
#     NoSuchTableException naming both uuids (the table the change was made to is gone;
#     a 409 CommitFailedException would have the client refresh and apply its change to
#     the new table), and the new table is unchanged;
#  2. a keyed create of shop.u, u purged and created anew by another request: the replay
#     is 409 AlreadyExistsException (the table there is not the one this request made);
#  3. the same table with the recorded metadata file gone still answers 200 with the
#     table as it is now (rest_idem_purged.sh), and a purge without re-creation 404;
#     exchanges checked against the OpenAPI document.
name=rest_idem_recreated
source "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

serve_checked ""
R=/v1/namespaces/shop
expect 200 x POST /v1/namespaces '{"namespace":["shop"]}'
S='"schema":{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}'
B='{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"1"}}]}'
uuid() { python3 -c 'import uuid; print(uuid.uuid4())'; }

# 1. a commit, the table purged and created anew
expect 200 x POST $R/tables "{\"name\":\"t\",$S}"
old_uuid=$(jget '["metadata"]["table-uuid"]' < "$tmp/body")
k1=$(uuid)
[ "$(kpost "$k1" $R/tables/t "$B")" = 200 ] || fail "keyed commit: $(head -c 300 "$tmp/body")"
expect 204 x DELETE "$R/tables/t?purgeRequested=true"
expect 200 x POST $R/tables "{\"name\":\"t\",$S}"
new_uuid=$(jget '["metadata"]["table-uuid"]' < "$tmp/body")
code=$(kpost "$k1" $R/tables/t "$B")
[ "$code" = 404 ] || soft "commit replay on the re-created table: $code, want 404: $(head -c 300 "$tmp/body")"
grep -q NoSuchTableException "$tmp/body" || soft "commit replay: not NoSuchTableException: $(head -c 300 "$tmp/body")"
grep -q "$old_uuid" "$tmp/body" && grep -q "$new_uuid" "$tmp/body" ||
  soft "commit replay: the answer names not both uuids: $(head -c 300 "$tmp/body")"
expect 200 x GET $R/tables/t
[ "$(jget '["metadata"]["properties"].get("a", "-")' < "$tmp/body")" = - ] ||
  soft "the re-created table got the old request's change"

# 2. a create, the table purged and created anew by another request
k2=$(uuid)
[ "$(kpost "$k2" $R/tables "{\"name\":\"u\",$S}")" = 200 ] || fail "keyed create: $(head -c 300 "$tmp/body")"
u1=$(jget '["metadata"]["table-uuid"]' < "$tmp/body")
expect 204 x DELETE "$R/tables/u?purgeRequested=true"
expect 200 x POST $R/tables "{\"name\":\"u\",$S}"
code=$(kpost "$k2" $R/tables "{\"name\":\"u\",$S}")
[ "$code" = 409 ] || soft "create replay on the re-created table: $code, want 409: $(head -c 300 "$tmp/body")"
grep -q AlreadyExistsException "$tmp/body" || soft "create replay: not AlreadyExistsException: $(head -c 300 "$tmp/body")"
grep -q "$u1" "$tmp/body" || soft "create replay: the answer does not name the created table's uuid: $(head -c 300 "$tmp/body")"

# 3. the same table, its recorded metadata file gone: the table as it is now; purged: 404
expect 200 x POST $R/tables "{\"name\":\"v\",$S}"
k3=$(uuid)
[ "$(kpost "$k3" $R/tables/v "$B")" = 200 ] || fail "keyed commit v: $(head -c 300 "$tmp/body")"
ml=$(jget '["metadata-location"]' < "$tmp/body")
expect 200 x POST $R/tables/v '{"requirements":[],"updates":[{"action":"set-properties","updates":{"b":"2"}}]}'
rm -f "${ml#file://}"
code=$(kpost "$k3" $R/tables/v "$B")
[ "$code" = 200 ] || soft "replay on the same table, its file gone: $code, want 200: $(head -c 300 "$tmp/body")"
expect 204 x DELETE "$R/tables/v?purgeRequested=true"
code=$(kpost "$k3" $R/tables/v "$B")
[ "$code" = 404 ] || soft "replay after the purge: $code, want 404: $(head -c 300 "$tmp/body")"
server_alive
openapi_check
[ "$fails" = 0 ] || { echo "$name: $fails failure(s)" >&2; exit 1; }
echo "$name: ok"
