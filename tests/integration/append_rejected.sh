#!/usr/bin/env bash
# append_rejected.sh - `floe append` commits no empty snapshot:
#   - every record rejected: nothing committed, exit 1, the message (and the JSON error
#     under --json) names the quarantine file, which holds the records;
#   - input without any record: nothing committed, exit 0, "noop": true under --json;
#   - some records rejected: the rest is committed and the result names the quarantine;
#   - --help says what happens when every record is rejected.
set -euo pipefail
name=append_rejected oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

nsnaps() { "$floe" snapshots "$1" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

"$floe" append --help | tr -s '\n ' '  ' | grep -q 'When every record is rejected nothing is committed and the append fails (exit 1)' ||
  fail "--help does not say what happens when every record is rejected"

"$floe" table create ns.r --schema "$tmp/s.json" >/dev/null
printf '{"k":"a","v":1}\n' > "$tmp/good.ndjson"
"$floe" append ns.r "$tmp/good.ndjson" >/dev/null
printf '{"k":1,"v":"x"}\n{"k":"b","v":"y"}\n{"zz":1}\n' > "$tmp/bad.ndjson"

rc=0; "$floe" append ns.r "$tmp/bad.ndjson" > "$tmp/bad.out" 2> "$tmp/bad.err" || rc=$?
[ $rc = 1 ] || fail "all records rejected: exit $rc, not 1"
[ "$(nsnaps ns.r)" = 1 ] || fail "all records rejected: a snapshot was committed"
q=$(grep -o 'quarantine file://[^)]*' "$tmp/bad.err" | sed 's/^quarantine file:\/\///') ||
  fail "all records rejected: the message names no quarantine: $(cat "$tmp/bad.err")"
grep -q 'all 3 records were rejected; nothing was committed' "$tmp/bad.err" || fail "message: $(cat "$tmp/bad.err")"
[ -n "$q" ] && [ "$(wc -l < "$q")" = 3 ] || fail "the quarantine $q does not hold the 3 records"

rc=0; "$floe" append ns.r "$tmp/bad.ndjson" --json > "$tmp/bad.json" 2>/dev/null || rc=$?
[ $rc = 1 ] || fail "all records rejected, --json: exit $rc"
python3 - "$tmp/bad.json" <<'PY' || fail "all records rejected, --json: $(cat "$tmp/bad.json")"
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["exit"] == 1 and "_quarantine" in e["message"], e
PY
[ "$(nsnaps ns.r)" = 1 ] || fail "all records rejected (--json): a snapshot was committed"

: > "$tmp/empty.ndjson"
"$floe" append ns.r "$tmp/empty.ndjson" > "$tmp/empty.out" || fail "empty input: exit $?"
grep -q 'nothing committed' "$tmp/empty.out" || fail "empty input: $(cat "$tmp/empty.out")"
"$floe" append ns.r "$tmp/empty.ndjson" --json | grep -q '"noop":true,"snapshot_id":0' || fail "empty input --json"
[ "$(nsnaps ns.r)" = 1 ] || fail "empty input: a snapshot was committed"

cat "$tmp/good.ndjson" "$tmp/bad.ndjson" > "$tmp/mixed.ndjson"
"$floe" append ns.r "$tmp/mixed.ndjson" --json > "$tmp/mixed.json" || fail "mixed input failed"
grep -q '"rejected":3,"quarantine":"file://' "$tmp/mixed.json" || fail "mixed: $(cat "$tmp/mixed.json")"
[ "$(nsnaps ns.r)" = 2 ] || fail "mixed input: not one new snapshot"
[ "$("$floe" scan ns.r --format canonical | wc -l)" = 2 ] || fail "rows after the mixed append"

[ $fails = 0 ] || exit 1
echo "$name: ok"
