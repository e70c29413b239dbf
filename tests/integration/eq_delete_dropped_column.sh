#!/usr/bin/env bash
# eq_delete_dropped_column.sh - an equality delete whose key columns include one the table
# schema has since dropped (Iceberg lets a writer drop it; the data files and the delete
# file still hold it). floe scan used to leave the dropped column out of the key, so the
# delete removed every row equal on the columns left: (k, n) = ('a', 1) deleted both 'a'
# rows once n was dropped. A reader cannot compare on a column it no longer reads: scan
# refuses, naming the delete file and the field id, as Iceberg Java's DeleteFilter does
# ("Cannot find required field for ID") and as floe rewrite already did; nothing is
# committed by rewrite.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
UPSERT=${FLOE_EQ_UPSERT:-$root/build/floe_eq_upsert}
[ -x "$UPSERT" ] || { echo "eq_delete_dropped_column: no floe_eq_upsert ($UPSERT), skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=dc
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"n","required":false,"type":"long"},{"id":3,"name":"v","required":false,"type":"long"}]}' > s.json
"$FLOE" table create ns.t --schema s.json > /dev/null
printf '%s\n' '{"k":"a","n":1,"v":1}' '{"k":"a","n":2,"v":2}' '{"k":"b","n":1,"v":3}' > base.ndjson
"$FLOE" append ns.t base.ndjson > /dev/null
printf 'a\t1\n' > keys.tsv
"$UPSERT" "$tmp/catalog.db" dc "$tmp/wh" ns.t k,n @@keys.tsv > /dev/null
vs() { python3 -c "import json,sys; print(' '.join(str(json.loads(l)['v']) for l in sorted(sys.stdin, key=lambda l: json.loads(l)['v'])))"; }
"$FLOE" scan ns.t > before.ndjson
[ "$(vs < before.ndjson)" = "2 3" ] || fail "before the drop: rows v=$(vs < before.ndjson), want 2 3"
snap=$("$FLOE" snapshots ns.t --json | python3 -c "import json,sys; print([s for s in json.load(sys.stdin) if s.get('current')][0]['snapshot_id'])")
"$FLOE" table schema ns.t drop-column n > /dev/null
rc=0
"$FLOE" scan ns.t > after.ndjson 2> after.err || rc=$?
if [ "$rc" = 0 ]; then
    # a scan that answers must answer right: v 2 and 3
    [ "$(vs < after.ndjson)" = "2 3" ] || fail "after dropping n: rows v=$(vs < after.ndjson), want 2 3 (the delete is on (k, n) = ('a', 1))"
else
    grep -q "equality field 2" after.err || fail "scan refused without naming the field: $(cat after.err)"
fi
rc=0
"$FLOE" scan ns.t --where "k = 'a'" > w.ndjson 2> w.err || rc=$?
if [ "$rc" = 0 ]; then
    [ "$(vs < w.ndjson)" = "2" ] || fail "after dropping n, k = 'a': rows v=$(vs < w.ndjson), want 2"
fi
# the snapshot from before the drop is read with the schema it had
# (no assertion on floe's choice of schema there: whatever it reads must be right)
rc=0
"$FLOE" scan ns.t --snapshot "$snap" > old.ndjson 2> old.err || rc=$?
if [ "$rc" = 0 ]; then
    [ "$(vs < old.ndjson)" = "2 3" ] || fail "snapshot $snap: rows v=$(vs < old.ndjson), want 2 3"
fi
nsnap0=$("$FLOE" snapshots ns.t --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
"$FLOE" rewrite ns.t --option rewrite-all=true --option min-input-files=1 > rw.out 2>&1 || true
nsnap1=$("$FLOE" snapshots ns.t --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
[ "$nsnap1" = "$nsnap0" ] || fail "rewrite committed with a delete it cannot apply: $(cat rw.out)"
[ "$fails" = 0 ] || exit 1
echo "eq_delete_dropped_column: ok"
