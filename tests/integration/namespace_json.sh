#!/usr/bin/env bash
# namespace_json.sh - issue 24 papercuts: `floe namespace create` and `drop` print a JSON
# result under --json (every command that changes something does), and `namespace
# properties` does not show PyIceberg's internal "exists" row (text or JSON).
set -euo pipefail
name=namespace_json oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

[ "$("$floe" namespace create ns2 --json)" = '{"namespace":"ns2","created":true}' ] || fail "namespace create --json"
"$floe" namespace properties ns2 --set owner=me >/dev/null
[ "$("$floe" namespace properties ns2)" = 'owner = me' ] || fail "properties text: $("$floe" namespace properties ns2)"
[ "$("$floe" namespace properties ns2 --json)" = '{"owner":"me"}' ] || fail "properties json: $("$floe" namespace properties ns2 --json)"
[ -z "$("$floe" namespace properties ns)" ] || fail "a namespace without properties shows: $("$floe" namespace properties ns)"
[ "$("$floe" namespace drop ns2 --json)" = '{"namespace":"ns2","dropped":true}' ] || fail "namespace drop --json"

[ $fails = 0 ] || exit 1
echo "$name: ok"
