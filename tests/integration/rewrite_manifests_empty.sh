#!/usr/bin/env bash
# rewrite_manifests_empty.sh - `floe rewrite-manifests` of a snapshot whose manifests hold
# no live entry (every row deleted: the data file removed whole, its manifest left with a
# DELETED entry only) and of a table without snapshots (adversary finding on issue 24:
# under UBSan the regrouping handed qsort a NULL array with a count of 0 and the command
# died with exit 98). The manifest of deleted entries is rewritten into none, the table
# still reads (0 rows, then the rows of a later append), and a second run has nothing to
# do. Meaningful under the sanitized build (FLOE_SANITIZE=ON), which the tests run.
set -euo pipefail
name=rewrite_manifests_empty oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
jq1() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
floe_rows() { "$floe" scan "$@" --format canonical | wc -l | tr -d ' '; }

"$floe" table create ns.t --schema "$tmp/s.json" >/dev/null
# no snapshot: nothing to rewrite
"$floe" rewrite-manifests ns.t --json > "$tmp/r0.json" || fail "empty table: exit $?, $(cat "$tmp/r0.json")"
[ "$(jq1 'd["noop"], d["manifests_before"]' < "$tmp/r0.json")" = "(True, 0)" ] || fail "empty table: $(cat "$tmp/r0.json")"

printf '{"k":"a","v":1}\n{"k":"a","v":2}\n' > "$tmp/a.ndjson"
"$floe" append ns.t "$tmp/a.ndjson" >/dev/null
"$floe" delete ns.t --where "k = 'a'" >/dev/null
[ "$(floe_rows ns.t)" = 0 ] || fail "rows after the delete: $(floe_rows ns.t)"
set +e
"$floe" rewrite-manifests ns.t --json > "$tmp/r1.json" 2>"$tmp/e1"; rc=$?
set -e
[ $rc = 0 ] || fail "manifests without live entries: exit $rc, $(head -3 "$tmp/e1")"
[ "$(jq1 'd["noop"], d["manifests_replaced"], d["manifests_after"], d["entries_processed"]' < "$tmp/r1.json")" = "(False, 1, 0, 0)" ] ||
  fail "manifests without live entries: $(cat "$tmp/r1.json")"
[ "$(floe_rows ns.t)" = 0 ] || fail "rows after the rewrite: $(floe_rows ns.t)"
[ "$("$floe" files ns.t --json)" = "[]" ] || fail "files after the rewrite: $("$floe" files ns.t --json)"
"$floe" rewrite-manifests ns.t --json | grep -q '"noop":true' || fail "a second rewrite-manifests did something"
"$floe" append ns.t "$tmp/a.ndjson" >/dev/null
"$floe" rewrite-manifests ns.t >/dev/null || fail "rewrite-manifests after a new append: exit $?"
[ "$(floe_rows ns.t)" = 2 ] || fail "rows after a new append: $(floe_rows ns.t)"

[ $fails = 0 ] || exit 1
echo "rewrite_manifests_empty: ok"
