#!/usr/bin/env bash
# rewrite_eq_promoted_date.sh - equality deletes on a date column the table has promoted to
# timestamp / timestamp_ns since (format v3). The data files' dates are read as midnight
# in the table's unit; floe rewrite's reader used to key the delete file's dates as days
# while it keyed the data rows' values in micro/nanoseconds, so no row matched: a rewrite
# brought the deleted rows back (floe scan, which reads the delete in the table's types,
# did not show them before). Here: floe scan before and after floe rewrite (rewrite-all)
# and floe rewrite-deletes read the rows replayed by hand; a delete key with a null
# date, a key on two columns, and a row appended after the promotion (a newer sequence
# number: not deleted) included.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
UPSERT=${FLOE_EQ_UPSERT:-$root/build/floe_eq_upsert}
[ -x "$UPSERT" ] || { echo "rewrite_eq_promoted_date: no floe_eq_upsert ($UPSERT), skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=pd
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"n","required":false,"type":"int"},{"id":2,"name":"dt","required":false,"type":"date"},{"id":3,"name":"v","required":false,"type":"long"}]}' > s.json
vs() { python3 -c "import json,sys; print(' '.join(sorted((str(json.loads(l)['v']) for l in sys.stdin), key=int)))"; }
# 20454 = 2026-01-01, 20455 = 2026-01-02
printf '%s\n' '{"n":1,"dt":"2026-01-01","v":1}' '{"n":2,"dt":"2026-01-02","v":2}' \
    '{"n":1,"dt":"2026-01-02","v":3}' '{"n":3,"dt":null,"v":4}' '{"n":4,"dt":"2026-01-01","v":5}' > base.ndjson
printf '20454\n' > k1.tsv          # dt = 2026-01-01: v 1, 5
printf '2\t20455\n' > k2.tsv       # (n, dt) = (2, 2026-01-02): v 2
printf '3\t\\N\n' > k3.tsv         # (n, dt) = (3, null): v 4
for unit in timestamp timestamp_ns; do
    t=ns.t_$unit
    "$FLOE" table create "$t" --schema s.json --property format-version=3 > /dev/null
    "$FLOE" append "$t" base.ndjson > /dev/null
    "$UPSERT" "$tmp/catalog.db" pd "$tmp/wh" "$t" dt @@k1.tsv > /dev/null
    "$UPSERT" "$tmp/catalog.db" pd "$tmp/wh" "$t" n,dt @@k2.tsv > /dev/null
    "$UPSERT" "$tmp/catalog.db" pd "$tmp/wh" "$t" n,dt @@k3.tsv > /dev/null
    [ "$("$FLOE" scan "$t" | vs)" = "3" ] || fail "$t before the promotion: v=$("$FLOE" scan "$t" | vs), want 3"
    "$FLOE" table schema "$t" widen dt "$unit" > /dev/null
    echo '{"n":1,"dt":"2026-01-01T00:00:00","v":6}' > late.ndjson
    "$FLOE" append "$t" late.ndjson > /dev/null
    want="3 6"
    [ "$("$FLOE" scan "$t" | vs)" = "$want" ] || fail "$t promoted: v=$("$FLOE" scan "$t" | vs), want $want"
    "$FLOE" rewrite "$t" --option rewrite-all=true > /dev/null
    got=$("$FLOE" scan "$t" | vs)
    [ "$got" = "$want" ] || fail "$t after rewrite: v=$got, want $want"
    # again from the deletes: a fresh table state where rewrite-all applies them in one pass
    "$FLOE" table create "${t}_b" --schema s.json --property format-version=3 > /dev/null
    "$FLOE" append "${t}_b" base.ndjson > /dev/null
    "$UPSERT" "$tmp/catalog.db" pd "$tmp/wh" "${t}_b" dt @@k1.tsv > /dev/null
    "$UPSERT" "$tmp/catalog.db" pd "$tmp/wh" "${t}_b" n,dt @@k2.tsv > /dev/null
    "$UPSERT" "$tmp/catalog.db" pd "$tmp/wh" "${t}_b" n,dt @@k3.tsv > /dev/null
    "$FLOE" table schema "${t}_b" widen dt "$unit" > /dev/null
    "$FLOE" append "${t}_b" late.ndjson > /dev/null
    "$FLOE" rewrite-deletes "${t}_b" > /dev/null
    got=$("$FLOE" scan "${t}_b" | vs)
    [ "$got" = "$want" ] || fail "${t}_b after rewrite-deletes: v=$got, want $want"
    "$FLOE" rewrite "${t}_b" --option rewrite-all=true > /dev/null
    got=$("$FLOE" scan "${t}_b" | vs)
    [ "$got" = "$want" ] || fail "${t}_b after rewrite-deletes and rewrite: v=$got, want $want"
done
[ "$fails" = 0 ] || exit 1
echo "rewrite_eq_promoted_date: ok"
