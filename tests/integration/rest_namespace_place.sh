#!/usr/bin/env bash
# rest_namespace_place.sh - `floe catalog serve` keeps namespaces' folders apart from each
# other and from tables' locations (adversary finding on issue 21, isolation: vended
# credentials and paths chosen by folder leaked across namespaces):
#  a. a namespace's location property (create or properties update) inside a table's
#     location, equal to or inside a descendant's folder, or around an unrelated
#     namespace's folder (made by floe commands, which are not held to the rule): 400
#     naming the table or namespace, nothing changed; removing the property is checked
#     the same way (the namespace goes back to its home);
#  b. a namespace whose folder would be a table's location (table a.t, then namespace
#     a.t at <a's folder>/t): 400 naming the table;
#  c. a table's location overlapping another table's (anywhere in the catalog) stays a
#     400, and the ordinary cases stay 200 (a namespace below another, a location
#     property inside the home, a table of the namespace inside its new folder).
set -euo pipefail
name=rest_namespace_place
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }
tokens='[token ops]
secret = secret-ops-0001
grants = *'
# a namespace made by floe commands with a folder inside the warehouse's "y" (the home
# of a REST namespace y made later)
"$floe" namespace create z --property "location=file://$tmp/wh/y/inner" >/dev/null
serve_checked "$tokens"
OPS=secret-ops-0001
wh=file://$tmp/wh
S='{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}'
refused() { # refused NEEDLE STATUS: a 400 whose message names NEEDLE
  [ "$2" = 400 ] || fail "expected 400 naming $1, got $2: $(head -c 300 "$tmp/body")"
  grep -qF -- "$1" "$tmp/body" || fail "the 400 does not name $1: $(cat "$tmp/body")"
}
ns_location() { expect 200 $OPS GET "/v1/namespaces/$1"; jget '["properties"].get("location")' < "$tmp/body"; }

expect 200 $OPS POST /v1/namespaces '{"namespace":["a"]}'
expect 200 $OPS POST /v1/namespaces/a/tables "{\"name\":\"t\",\"schema\":$S}"
[ "$(jget '["metadata"]["location"]' < "$tmp/body")" = "$wh/a/t" ] || fail "a.t: $(cat "$tmp/body")"

# b. a namespace whose home is a table's location
refused "table a.t" "$(req $OPS POST /v1/namespaces '{"namespace":["a","t"]}')"
expect 404 $OPS GET /v1/namespaces/a%1Ft
# a. a location property inside a table's location, by create and by update
expect 200 $OPS POST /v1/namespaces '{"namespace":["p"]}'
expect 200 $OPS POST /v1/namespaces/p/tables "{\"name\":\"t\",\"schema\":$S}"
refused "table p.t" "$(req $OPS POST /v1/namespaces/p/properties "{\"updates\":{\"location\":\"$wh/p/t\"}}")"
refused "table p.t" "$(req $OPS POST /v1/namespaces/p/properties "{\"updates\":{\"location\":\"$wh/p/t/deeper\"}}")"
# ...equal to or inside a descendant's folder
expect 200 $OPS POST /v1/namespaces "{\"namespace\":[\"p\",\"z\"],\"properties\":{\"location\":\"$wh/p/z\"}}"
refused "namespace p.z" "$(req $OPS POST /v1/namespaces/p/properties "{\"updates\":{\"location\":\"$wh/p/z\"}}")"
refused "namespace p.z" "$(req $OPS POST /v1/namespaces/p/properties "{\"updates\":{\"location\":\"$wh/p/z/in\"}}")"
[ "$(ns_location p)" = None ] || fail "a refused update set p's location"
# ...around an unrelated namespace's folder (z, made by floe commands at wh/y/inner)
refused "namespace z" "$(req $OPS POST /v1/namespaces '{"namespace":["y"]}')"
refused "namespace z" "$(req $OPS POST /v1/namespaces "{\"namespace\":[\"y\"],\"properties\":{\"location\":\"$wh/y/inner/x\"}}")"
expect 404 $OPS GET /v1/namespaces/y
# removing the property puts the namespace back at its home: checked too
expect 200 $OPS POST /v1/namespaces "{\"namespace\":[\"m\"],\"properties\":{\"location\":\"$wh/m/own\"}}"
expect 200 $OPS POST /v1/namespaces/m/tables "{\"name\":\"k\",\"schema\":$S}"
[ "$(jget '["metadata"]["location"]' < "$tmp/body")" = "$wh/m/own/k" ] || fail "m.k: $(cat "$tmp/body")"
"$floe" namespace create m2 --property "location=file://$tmp/wh/m/x" >/dev/null
refused "namespace m2" "$(req $OPS POST /v1/namespaces/m/properties '{"removals":["location"]}')"
[ "$(ns_location m)" = "$wh/m/own" ] || fail "a refused removal changed m's location"

# c. tables against tables, and what stays allowed
refused "table a.t" "$(req $OPS POST /v1/namespaces/a/tables "{\"name\":\"u\",\"schema\":$S,\"location\":\"$wh/a/t/sub\"}")"
expect 200 $OPS POST /v1/namespaces "{\"namespace\":[\"a\",\"q\"],\"properties\":{\"location\":\"$wh/a/q\"}}"
expect 200 $OPS POST /v1/namespaces '{"namespace":["a","r"]}'
expect 200 $OPS POST /v1/namespaces/p/properties "{\"updates\":{\"location\":\"$wh/p/all\"}}"
expect 200 $OPS POST /v1/namespaces/p/tables "{\"name\":\"n\",\"schema\":$S}"
[ "$(jget '["metadata"]["location"]' < "$tmp/body")" = "$wh/p/all/n" ] || fail "p.n: $(cat "$tmp/body")"
expect 200 $OPS POST /v1/namespaces/p/properties "{\"updates\":{\"location\":\"$wh/p\"}}"
expect 200 $OPS POST /v1/namespaces/p/properties '{"removals":["location"]}'
expect 200 $OPS POST /v1/namespaces '{"namespace":["a","r","s"]}'
server_alive
openapi_check
echo "$name: ok"
