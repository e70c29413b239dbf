#!/usr/bin/env bash
# namespace_json.sh - issue 24 papercuts: `floe namespace create` and `drop` print a JSON
# result under --json (every command that changes something does), and `namespace
# properties` does not show PyIceberg's internal "exists" row (text or JSON). Namespace
# properties take the same `set K=V...` / `unset K...` form as `floe table properties`,
# with a JSON result under --json; the old --set/--remove flags are refused, naming it.
set -euo pipefail
name=namespace_json oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

[ "$("$floe" namespace create ns2 --json)" = '{"namespace":"ns2","created":true}' ] || fail "namespace create --json"
[ "$("$floe" namespace properties ns2 set owner=me)" = 'owner = me' ] || fail "properties set text"
[ "$("$floe" namespace properties ns2)" = 'owner = me' ] || fail "properties text: $("$floe" namespace properties ns2)"
[ "$("$floe" namespace properties ns2 --json)" = '{"owner":"me"}' ] || fail "properties json: $("$floe" namespace properties ns2 --json)"
[ "$("$floe" namespace properties ns2 set owner=me a=1 --json)" = '{"namespace":"ns2","changed":true,"properties":{"a":"1","owner":"me"}}' ] ||
  fail "properties set --json: $("$floe" namespace properties ns2 set owner=me a=1 --json)"
[ "$("$floe" namespace properties ns2 set a=1 --json)" = '{"namespace":"ns2","changed":false,"properties":{"a":"1","owner":"me"}}' ] ||
  fail "properties set unchanged --json"
[ "$("$floe" namespace properties ns2 set a=1)" = "$(printf 'a = 1\nns2: nothing changed (the properties already were so)')" ] ||
  fail "properties set unchanged: $("$floe" namespace properties ns2 set a=1)"
[ "$("$floe" namespace properties ns2 unset a zz)" = "$(printf 'unset a\nzz: not set')" ] ||
  fail "properties unset: $("$floe" namespace properties ns2 unset a zz)"
[ "$("$floe" namespace properties ns2 unset a --json)" = '{"namespace":"ns2","changed":false,"properties":{"owner":"me"}}' ] ||
  fail "properties unset --json"
for bad in "--set owner=x" "--remove owner" "frob a=1" "set" "set a" "unset a=1" "set exists=false" "unset exists"; do
  rc=0; "$floe" namespace properties ns2 $bad >/dev/null 2>"$tmp/bad_err.txt" || rc=$?
  [ $rc = 2 ] || fail "namespace properties ns2 $bad: exit $rc"
  [ "$(wc -l < "$tmp/bad_err.txt")" = 1 ] || fail "namespace properties ns2 $bad: $(cat "$tmp/bad_err.txt")"
done
old_err=$("$floe" namespace properties ns2 --set owner=x 2>&1 || true)
grep -qF 'floe namespace properties NS set K=V' <<<"$old_err" || fail "--set does not name the new form: $old_err"
[ "$("$floe" namespace properties ns2)" = 'owner = me' ] || fail "a refused change changed: $("$floe" namespace properties ns2)"
"$floe" namespace properties ns2 set "$(printf 'k\033[2J=v\rZ')" >/dev/null
"$floe" namespace properties ns2 > "$tmp/esc_out.txt"
if LC_ALL=C grep -q "$(printf '\033')" "$tmp/esc_out.txt"; then fail "namespace properties prints raw control characters"; fi
grep -qF 'k\x1b[2J = v\x0dZ' "$tmp/esc_out.txt" || fail "namespace properties escapes: $(cat "$tmp/esc_out.txt")"
"$floe" namespace properties ns2 unset "$(printf 'k\033[2J')" >/dev/null
[ -z "$("$floe" namespace properties ns)" ] || fail "a namespace without properties shows: $("$floe" namespace properties ns)"
[ "$("$floe" namespace drop ns2 --json)" = '{"namespace":"ns2","dropped":true}' ] || fail "namespace drop --json"

[ $fails = 0 ] || exit 1
echo "$name: ok"
