#!/usr/bin/env bash
# rest_idem_purged.sh - a commit's Idempotency-Key replayed after the metadata file it
# recorded is gone gets a definite answer that names no server path (adversary finding
# F8 on issue 21: 500 InternalServerError "open /abs/path/...metadata.json: No such file"):
#  - the table dropped with purge since: 404 NoSuchTableException, no local path;
#  - the table still there but the recorded metadata file removed (as old metadata is):
#    200 with the table as it is now;
#  - a replay whose file is still there answers as before (200, the recorded metadata);
#    exchanges checked against the OpenAPI document.
name=rest_idem_purged
source "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

serve_checked ""
R=/v1/namespaces/shop
expect 200 x POST /v1/namespaces '{"namespace":["shop"]}'
S='"schema":{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}'
expect 200 x POST $R/tables "{\"name\":\"t2\",$S}"
expect 200 x POST $R/tables "{\"name\":\"t3\",$S}"
B='{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"1"}}]}'
uuid() { python3 -c 'import uuid; print(uuid.uuid4())'; }
# an error answer's message names no path of the server's
nopath() { if grep -q "$tmp" "$tmp/body"; then soft "$1: the error names a server path: $(head -c 300 "$tmp/body")"; fi; }

# 1. the table purged since
k1=$(uuid)
[ "$(kpost "$k1" $R/tables/t2 "$B")" = 200 ] || fail "keyed commit: $(head -c 300 "$tmp/body")"
[ "$(kpost "$k1" $R/tables/t2 "$B")" = 200 ] || soft "replay before the purge: $(head -c 300 "$tmp/body")"
expect 204 x DELETE "$R/tables/t2?purgeRequested=true"
code=$(kpost "$k1" $R/tables/t2 "$B")
[ "$code" = 404 ] || soft "replay after the purge: $code, want 404: $(head -c 300 "$tmp/body")"
grep -q NoSuchTableException "$tmp/body" || soft "replay after the purge: not NoSuchTableException: $(head -c 300 "$tmp/body")"
nopath "replay after the purge"

# 2. the table there, the recorded metadata file removed
k2=$(uuid)
[ "$(kpost "$k2" $R/tables/t3 "$B")" = 200 ] || fail "keyed commit t3: $(head -c 300 "$tmp/body")"
ml=$(jget '["metadata-location"]' < "$tmp/body")
expect 200 x POST $R/tables/t3 '{"requirements":[],"updates":[{"action":"set-properties","updates":{"b":"2"}}]}'
rm -f "${ml#file://}"
code=$(kpost "$k2" $R/tables/t3 "$B")
[ "$code" = 200 ] || soft "replay with its metadata file gone: $code, want 200: $(head -c 300 "$tmp/body")"
[ "$code" != 200 ] || [ "$(jget '["metadata"]["properties"].get("b")' < "$tmp/body")" = 2 ] ||
  soft "replay with its metadata file gone: not the table as it is now: $(head -c 300 "$tmp/body")"
server_alive
openapi_check
[ "$fails" = 0 ] || { echo "$name: $fails failure(s)" >&2; exit 1; }
echo "$name: ok"
