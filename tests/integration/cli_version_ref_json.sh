#!/usr/bin/env bash
# cli_version_ref_json.sh - issue 24, adversary finding adv24d 1: `floe ref` given options
# but no action is a one-line usage error, printed as {"error": {"code": "USAGE", ...}} on
# standard output under --json as every other command does (it printed the usage text
# and nothing on stdout); `floe version` refuses what it does not take (exit 2) and
# honours --json ({"version": "..."}); `floe --version` is the same command.
set -euo pipefail
name=cli_version_ref_json oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

usage_refused "ref --json" "no action given" ref --json
usage_refused "ref --json --catalog" "" ref --json --catalog test
usage_refused "version --json --bogus" "" version --json --bogus
usage_refused "version --bogus --json" "" version --bogus --json
usage_refused "version extra --json" "" version extra --json
usage_refused "--version --bogus --json" "unknown option --bogus" --version --bogus --json

# floe ref alone still prints its usage text (exit 2, nothing on stdout)
rc=0; "$floe" ref >out.txt 2>err.txt || rc=$?
[ $rc = 2 ] && [ ! -s out.txt ] && grep -q '^usage: floe ref' err.txt || fail "ref alone: exit $rc, $(cat err.txt)"

# version: the text, or one JSON document; anything else refused
v=$("$floe" version) || fail "version: exit $?"
[[ $v =~ ^floe\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "version: $v"
[ "$("$floe" --version)" = "$v" ] || fail "--version: $("$floe" --version)"
for form in version --version; do
  out=$("$floe" $form --json) || fail "$form --json: exit $?"
  [ "$(python3 -c 'import json,sys; print("floe " + json.loads(sys.argv[1])["version"])' "$out" 2>/dev/null)" = "$v" ] ||
    fail "$form --json: $out"
done
rc=0; "$floe" version --bogus >out.txt 2>err.txt || rc=$?
[ $rc = 2 ] && [ ! -s out.txt ] && grep -q "^floe version: unknown option --bogus" err.txt ||
  fail "version --bogus: exit $rc, $(cat out.txt) $(cat err.txt)"
"$floe" version --help | grep -q '^usage: floe version' || fail "version --help"
"$floe" help version | grep -q '^usage: floe version' || fail "help version"

[ $fails = 0 ] || exit 1
echo "$name: ok"
