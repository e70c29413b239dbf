#!/usr/bin/env bash
# plan_delete_kinds.sh - floe scan --plan names each delete file for what it is (issue 23,
# adversary r2: a deletion vector was labelled a position delete file):
#   - --json: "content" is "deletion_vector" for a vector (v3, a blob of a Puffin file,
#     with its content_offset and content_size_in_bytes), "position" for a position
#     delete file, "equality" for an equality delete file; each with its record count;
#     "local_path" is a path, as the data file's (not a file:// URI);
#   - the text plan says "1 deletion vector" / "N delete files".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
UPSERT=${FLOE_EQ_UPSERT:-$root/build/floe_eq_upsert}
[ -x "$UPSERT" ] || { echo "plan_delete_kinds: no floe_eq_upsert ($UPSERT), skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "plan_delete_kinds: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=pk
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"v","required":false,"type":"long"}]}' > s.json
printf '{"k":"a","v":1}\n{"k":"b","v":2}\n{"k":"c","v":3}\n' > rows.ndjson
"$FLOE" table create ns.v3 --schema s.json --property format-version=3 > /dev/null
"$FLOE" table create ns.v2 --schema s.json > /dev/null
for t in v2 v3; do
  "$FLOE" append ns.$t rows.ndjson > /dev/null
  "$FLOE" delete ns.$t --where "k = 'a'" > /dev/null || fail "delete from ns.$t"
done
"$UPSERT" "$tmp/catalog.db" pk "$tmp/wh" ns.v2 k b > /dev/null || fail "equality delete of b"

check() { # check TABLE EXPECTED: the kinds of the delete files of the one data file
  "$FLOE" scan "$1" --plan --json > plan.json || fail "plan of $1"
  python3 - "$2" <<'PY' || fail "$1: $(cat plan.json)"
import json, os, sys
plan = json.load(open('plan.json'))
(f,) = plan['files']
kinds = sorted(d['content'] for d in f['deletes'])
assert kinds == sorted(sys.argv[1].split(',')), kinds
for d in f['deletes']:
    assert os.path.isfile(d['local_path']), d
    assert d['records'] == 1, d
    if d['content'] == 'deletion_vector':
        assert d['path'].endswith('.puffin'), d
        assert d['content_offset'] >= 4 and d['content_size_in_bytes'] > 0, d
    else:
        assert not d['path'].endswith('.puffin') and 'content_offset' not in d, d
PY
}
check ns.v3 deletion_vector
check ns.v2 equality,position
"$FLOE" scan ns.v3 --plan > plan.txt
grep -q $'\t1 deletion vector$' plan.txt || fail "v3 text plan: $(cat plan.txt)"
"$FLOE" scan ns.v2 --plan > plan.txt
grep -q $'\t2 delete files$' plan.txt || fail "v2 text plan: $(cat plan.txt)"
[ "$("$FLOE" scan ns.v2 | wc -l)" = 1 ] || fail "v2 rows"
[ "$("$FLOE" scan ns.v3 | wc -l)" = 2 ] || fail "v3 rows"
echo "plan_delete_kinds: ok"
