#!/usr/bin/env bash
# rollback_time_format.sh - issue 24, adversary finding adv24d 2: `floe snapshots rollback
# --to TIME` with a time before 1970 (epoch milliseconds below 0, or an ISO time) names the
# instant it looked for as `floe scan --as-of` does: the milliseconds are floor-divided, so
# -1001 is 1969-12-31T23:59:58.999Z (it was printed 23:59:59.-01Z) and 23:59:59.5Z stays
# 23:59:59.500Z (it was printed 1970-01-01T00:00:00.-500Z).
set -euo pipefail
name=rollback_time_format oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

"$floe" table create ns.t --schema s.json >/dev/null
echo '{"k":"a","v":1}' > a.ndjson
"$floe" append ns.t a.ndjson >/dev/null

# rollback --to T: exit 1, the message names the instant $2
check() {
  local rc=0
  "$floe" snapshots rollback ns.t --to "$1" > out.txt 2> err.txt || rc=$?
  [ $rc = 1 ] || fail "rollback --to $1: exit $rc, $(cat err.txt)"
  grep -qF "at or before $2 " err.txt || fail "rollback --to $1: expected $2 in: $(cat err.txt)"
  ! grep -q '\.-' err.txt || fail "rollback --to $1: negative millisecond field: $(cat err.txt)"
}
check -1001 1969-12-31T23:59:58.999Z
check -1 1969-12-31T23:59:59.999Z
check -1000 1969-12-31T23:59:59.000Z
check 1969-12-31T23:59:59.5Z 1969-12-31T23:59:59.500Z
check 1969-07-20T20:17:40Z 1969-07-20T20:17:40.000Z

# the same instant as scan --as-of names it
rc=0; "$floe" scan ns.t --as-of -1001 > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] && grep -qF '1969-12-31T23:59:58.999Z' err.txt || fail "scan --as-of -1001: exit $rc, $(cat err.txt)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
