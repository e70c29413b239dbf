#!/usr/bin/env bash
# table_type_version_args.sh - bad arguments to the table evolution commands are usage
# errors (exit 2, one line naming the argument; under --json the USAGE error document),
# checked before anything is committed (adversary findings on issue 24):
#   - `floe table schema NS.NAME add-column PATH TYPE` and `widen PATH TYPE` with a TYPE
#     that does not parse (an unknown name, a malformed decimal, an unclosed struct, an
#     empty text): exit 2 naming the type text (it was exit 1, as a failed commit); a
#     TYPE that parses but breaks a rule of the spec (long to int) stays a refusal, exit 1;
#   - `floe table upgrade NS.NAME --format-version N` below the table's version: exit 2,
#     "format versions cannot go down" (it said "nothing to do"); the table's own version
#     is "already at format version N", exit 0; no --format-version on a v3 table changes
#     nothing, exit 0.
set -euo pipefail
name=table_type_version_args oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
expect() { # CODE PATTERN CMD...: exit CODE, PATTERN on stderr
  local code=$1 pat=$2 rc; shift 2
  set +e
  "$@" > "$tmp/ex.out" 2> "$tmp/ex.err"; rc=$?
  set -e
  [ "$rc" = "$code" ] && { [ -z "$pat" ] || grep -qF -- "$pat" "$tmp/ex.err"; } ||
    fail "${*:2}: exit $rc (want $code), stderr: $(cat "$tmp/ex.err")"
}

"$floe" table create ns.t --schema "$tmp/s.json" >/dev/null
loc=$(meta ns.t)
expect 2 '"lng"' "$floe" table schema ns.t add-column z lng
expect 2 '"decimal(10,2"' "$floe" table schema ns.t add-column z 'decimal(10,2'
expect 2 'type "struct<a: int": want' "$floe" table schema ns.t add-column z 'struct<a: int'
expect 2 'type "list<strin>" at byte 5: ' "$floe" table schema ns.t add-column z 'list<strin>'
expect 2 'type "": a type is missing' "$floe" table schema ns.t add-column z ''
expect 2 '"long long"' "$floe" table schema ns.t widen v 'long long'
expect 2 '"dbl"' "$floe" table schema ns.t widen v dbl
expect 2 'schema widen: ' "$floe" table schema ns.t widen v dbl
# the usage error comes before the table is looked up
expect 2 '"lng"' "$floe" table schema ns.nosuch add-column z lng
set +e
"$floe" table schema ns.t add-column z lng --json > "$tmp/j.json" 2>/dev/null; rc=$?
set -e
[ $rc = 2 ] && python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["code"] == "USAGE" and e["exit"] == 2 and "\"lng\"" in e["message"], e' "$tmp/j.json" ||
  fail "add-column --json with a bad type: exit $rc, $(cat "$tmp/j.json")"
# a type that parses but that the spec does not allow: still a refusal of the change
expect 1 'long to int is not a promotion' "$floe" table schema ns.t widen v int
[ "$(meta ns.t)" = "$loc" ] || fail "a refused change committed"
# good types still commit
"$floe" table schema ns.t add-column z 'map<string, decimal(10, 2)>' >/dev/null || fail "add-column with a good type"
[ "$(mq ns.t '[f["name"] for f in [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]["fields"]]')" = "['k', 'v', 'z']" ] ||
  fail "add-column z: $(mq ns.t 'm["schemas"]')"

# ---- upgrade ---------------------------------------------------------------------------------
expect 0 '' "$floe" table upgrade ns.t
grep -qx 'ns.t is already at format version 2: nothing to do' "$tmp/ex.out" || fail "upgrade of a v2 table: $(cat "$tmp/ex.out")"
"$floe" table upgrade ns.t --format-version 3 | grep -q 'upgraded ns.t from format v2 to v3' || fail "upgrade to v3"
loc=$(meta ns.t)
expect 2 'format versions cannot go down' "$floe" table upgrade ns.t --format-version 2
grep -q '2 is below the table.s format version 3' "$tmp/ex.err" || fail "downgrade message: $(cat "$tmp/ex.err")"
set +e
"$floe" table upgrade ns.t --format-version 2 --json > "$tmp/u.json" 2>/dev/null; rc=$?
set -e
[ $rc = 2 ] && python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["code"] == "USAGE" and "cannot go down" in e["message"], e' "$tmp/u.json" ||
  fail "downgrade --json: exit $rc, $(cat "$tmp/u.json")"
expect 0 '' "$floe" table upgrade ns.t --format-version 3
grep -qx 'ns.t is already at format version 3: nothing to do' "$tmp/ex.out" || fail "upgrade of a v3 table to 3: $(cat "$tmp/ex.out")"
"$floe" table upgrade ns.t --format-version 3 --json | grep -q '"format_version_before":3,"format_version":3,"upgraded":false' ||
  fail "upgrade of a v3 table to 3 --json"
expect 0 '' "$floe" table upgrade ns.t
grep -qx 'ns.t is already at format version 3: nothing to do' "$tmp/ex.out" || fail "upgrade of a v3 table without a version: $(cat "$tmp/ex.out")"
[ "$(meta ns.t)" = "$loc" ] && [ "$(mq ns.t 'm["format-version"]')" = 3 ] || fail "a refused or empty upgrade committed"

[ $fails = 0 ] || exit 1
echo "table_type_version_args: ok"
