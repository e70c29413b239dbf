#!/usr/bin/env bash
# rest_idem_canonical.sh - `floe catalog serve` tells a retry of the same request from
# another request under one Idempotency-Key by the meaning of its JSON body, not its
# bytes, and refuses a request that carries two keys (adversary finding F5 on issue 21):
#  1. a keyed commit retried with the same JSON written another way (blanks, key order,
#     a \u escape): the first answer again (same metadata-location), nothing applied twice
#     (before: 400 "used for another request" - a client whose retry re-serialises its
#     body could not learn that its first commit landed);
#  2. the same key with another body: still 400, nothing applied;
#  3. a keyed namespace create retried with its properties in another order: the first
#     answer again;
#  4. two Idempotency-Key headers (two values, or one value twice): 400 naming the header,
#     nothing applied (before: the first key was honoured and the change applied, and a
#     retry under the other key applied it again).
# Exchanges through the OpenAPI-checking proxy when it is installed; the two-header
# requests go to the server directly (a proxy may join the two values into one).
name=rest_idem_canonical
source "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

serve_checked ""
direct=http://127.0.0.1:$port
R=/v1/namespaces/shop
expect 200 x POST /v1/namespaces '{"namespace":["shop"]}'
S='"schema":{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}'
expect 200 x POST $R/tables "{\"name\":\"t\",$S}"
uuid() { python3 -c 'import uuid; print(uuid.uuid4())'; }
# the table's metadata-location now
current() { expect 200 x GET $R/tables/t; jget '["metadata-location"]' < "$tmp/body"; }
prop() { expect 200 x GET $R/tables/t; jget "[\"metadata\"][\"properties\"].get(\"$1\")" < "$tmp/body"; }

# 1. the same commit written three ways
k1=$(uuid)
B1='{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"1","b":"2"}}]}'
[ "$(kpost "$k1" $R/tables/t "$B1")" = 200 ] || fail "keyed commit: $(head -c 300 "$tmp/body")"
ml=$(jget '["metadata-location"]' < "$tmp/body")
B1b='{ "updates" : [ { "updates" : { "b" : "2", "a" : "1" },
  "action" : "set-properties" } ],
  "requirements" : [ ] }'
B1c='{"updates":[{"action":"set-properties","updates":{"\u0061":"1","b":"\u0032"}}],"requirements":[]}'
for body in "$B1b" "$B1c"; do
  code=$(kpost "$k1" $R/tables/t "$body")
  if [ "$code" != 200 ]; then
    soft "retry with the same JSON written another way: $code, want 200: $(head -c 300 "$tmp/body")"
  elif [ "$(jget '["metadata-location"]' < "$tmp/body")" != "$ml" ]; then
    soft "retry with the same JSON written another way: not the first answer"
  fi
done
[ "$(current)" = "$ml" ] || soft "the retries changed the table (metadata-location moved on)"

# 2. the same key, another request
code=$(kpost "$k1" $R/tables/t '{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"9","b":"2"}}]}')
[ "$code" = 400 ] || soft "same key, another body: $code, want 400: $(head -c 300 "$tmp/body")"
[ "$(prop a)" = 1 ] || soft "same key, another body: the change was applied"

# 3. a namespace create, its properties in another order
k2=$(uuid)
[ "$(kpost "$k2" /v1/namespaces '{"namespace":["n2"],"properties":{"x":"1","y":"2"}}')" = 200 ] ||
  fail "keyed namespace create: $(head -c 300 "$tmp/body")"
code=$(kpost "$k2" /v1/namespaces '{"properties":{"y":"2","x":"1"},"namespace":["n2"]}')
[ "$code" = 200 ] || soft "namespace create retried, properties reordered: $code, want 200: $(head -c 300 "$tmp/body")"

# 4. two Idempotency-Key headers
two_keys() { # KEY1 KEY2 BODY: the status of a commit carrying both keys, to the server
  curl -s -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -H "Idempotency-Key: $1" -H "Idempotency-Key: $2" -X POST "$direct$R/tables/t" -d "$3"
}
before=$(current)
k3=$(uuid)
k4=$(uuid)
for pair in "$k3 $k4" "$k3 $k3"; do
  # shellcheck disable=SC2086
  code=$(two_keys $pair '{"requirements":[],"updates":[{"action":"set-properties","updates":{"c":"3"}}]}')
  if [ "$code" != 400 ] || ! grep -q 'Idempotency-Key' "$tmp/body"; then
    soft "two Idempotency-Key headers ($pair): $code, want 400 naming the header: $(head -c 300 "$tmp/body")"
  fi
done
[ "$(current)" = "$before" ] || soft "a request with two Idempotency-Key headers changed the table"
[ "$(prop c)" = None ] || soft "a request with two Idempotency-Key headers set property c"

server_alive
openapi_check
[ "$fails" = 0 ] || { echo "$name: $fails failure(s)" >&2; exit 1; }
echo "$name: ok"
