#!/usr/bin/env bash
# rewrite_eq_budget.sh - `floe rewrite --option equality-delete-buffer-bytes=N`: equality
# delete keys that do not fit the budget are hash-partitioned into passes, and the
# rewrite is the same as with the keys held at once.
#   - a v2 table of 40,000 rows with 400-byte string keys, four upsert commits deleting
#     20,000 of them by key (equality delete files written through floe's library by
#     floe_eq_upsert) and a position delete file (floe delete) on 100 more;
#   - floe rewrite (rewrite-all) with the default budget holds the keys at once (one
#     pass, key sets over 8 MiB) and reads the rows a replay in python computes;
#   - rolled back, the same rewrite with a budget of 1 MiB takes more than one pass,
#     never holds more than 1 MiB of key sets, and its table scans the same rows in the
#     same order as the unbudgeted one (floe scan text compared byte for byte); its peak
#     resident set is at least 4 MiB under the unbudgeted one's (ASan's quarantine off
#     for both: it keeps freed memory resident);
#   - a budget of 0 or not a number is refused (exit 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
UPSERT=${FLOE_EQ_UPSERT:-$root/build/floe_eq_upsert}
[ -x "$UPSERT" ] || { echo "rewrite_eq_budget: no floe_eq_upsert ($UPSERT), skipped"; exit 77; }
[ -x /usr/bin/time ] || { echo "rewrite_eq_budget: no /usr/bin/time, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=eb
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"v","required":false,"type":"long"}]}' > s.json
"$FLOE" table create ns.t --schema s.json --property format-version=2 > /dev/null
python3 - <<'PY'
pad = 'p' * 390
with open('base.ndjson', 'w') as f:
    for i in range(40000):
        f.write('{"k":"k%06d%s","v":%d}\n' % (i, pad, i))
for part in range(4):  # every other row of each quarter
    with open('keys%d' % part, 'w') as f:
        f.write('\n'.join('k%06d%s' % (i, pad) for i in range(part * 10000, (part + 1) * 10000, 2)))
PY
"$FLOE" append ns.t base.ndjson > /dev/null
for part in 0 1 2 3; do
    "$UPSERT" "$tmp/catalog.db" eb "$tmp/wh" ns.t k "@keys$part" > /dev/null ||
        fail "upsert $part"
done
# 100 more rows by position (odd v below 200: not deleted by key)
"$FLOE" delete ns.t --where "v < 200" > /dev/null || fail "floe delete"
snap=$("$FLOE" snapshots ns.t --json | python3 -c "import json,sys; print([s for s in json.load(sys.stdin) if s.get('current')][0]['snapshot_id'])")
python3 - > expected <<'PY'
pad = 'p' * 390
for i in range(40000):
    if i % 2 == 1 and i >= 200:
        print('k%06d%s %d' % (i, pad, i))
PY
rows() { "$FLOE" scan ns.t | python3 -c "
import json,sys
rs = [json.loads(l) for l in sys.stdin]
print('\n'.join('%s %d' % (r['k'], r['v']) for r in sorted(rs, key=lambda r: r['v'])))"; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
rewrite() { # rewrite LABEL [OPTIONS...]: timed, rows kept in LABEL.scan
    local label=$1; shift
    if ! ASAN_OPTIONS=$asan /usr/bin/time -f '%M' -o "$label.rss" "$FLOE" rewrite ns.t \
           --option rewrite-all=true "$@" --json > "$label.json" 2> "$label.err"; then
        fail "$label: rewrite failed: $(tail -2 "$label.err")"
        echo '{}' > "$label.json"; echo 0 > "$label.rss"
    fi
    "$FLOE" scan ns.t > "$label.scan"
    [ -n "$("$FLOE" scan ns.t --plan --json | python3 -c "
import json,sys; p = json.load(sys.stdin); print('x' if any(f['deletes'] for f in p['files']) else '')")" ] &&
        fail "$label: delete files still apply"
    rows > "$label.rows"
    cmp -s "$label.rows" expected || fail "$label: rows differ from the replay ($(wc -l < "$label.rows") rows, $(wc -l < expected) expected)"
    "$FLOE" snapshots rollback ns.t --to "$snap" > /dev/null
}
rewrite whole
rewrite budget --option equality-delete-buffer-bytes=1048576
p1=$(field whole.json eq_delete_passes 2>/dev/null || echo -)
k1=$(field whole.json eq_delete_key_bytes_peak 2>/dev/null || echo 0)
p2=$(field budget.json eq_delete_passes 2>/dev/null || echo -)
k2=$(field budget.json eq_delete_key_bytes_peak 2>/dev/null || echo 999999999)
[ "$p1" = 1 ] || fail "default budget: $p1 passes, 1 expected"
[ "$k1" -gt 8388608 ] || fail "default budget: key sets of $k1 bytes, over 8 MiB expected"
[ "$p2" != - ] && [ "$p2" -gt 1 ] || fail "1 MiB budget: $p2 passes, more than 1 expected"
[ "$k2" -le 1048576 ] || fail "1 MiB budget: key sets of $k2 bytes held at once"
cmp -s whole.scan budget.scan || fail "the budgeted rewrite's rows differ from the unbudgeted one's (in order)"
r1=$(cat whole.rss) r2=$(cat budget.rss)
[ "$r2" -gt 0 ] && [ "$r2" -le $((r1 - 4096)) ] ||
    fail "peak RSS with the budget $r2 KiB, without $r1 KiB: not 4 MiB under"
for bad in 0 -1 x; do
    rc=0
    "$FLOE" rewrite ns.t --option "equality-delete-buffer-bytes=$bad" > /dev/null 2>&1 || rc=$?
    [ "$rc" = 2 ] || fail "equality-delete-buffer-bytes=$bad: exit $rc, 2 expected"
done
echo "rewrite_eq_budget: passes $p1 / $p2, key sets $k1 / $k2 bytes, peak RSS $r1 / $r2 KiB"
if [ "$fails" -gt 0 ]; then
    echo "rewrite_eq_budget: $fails failure(s)"
    exit 1
fi
echo "rewrite_eq_budget: ok"
