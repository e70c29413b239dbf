#!/usr/bin/env bash
# eq_delete_dropped_column.sh - dropping a column that a live equality delete file keys on.
# The data files written before the drop still hold the column and the delete matches
# rows by it (format/spec.md "Equality Delete Files"), but floe's readers key a row by the
# current schema's columns. floe table schema drop-column let the drop through, and from
# then on floe scan refused the table ("equality field 2 is not a column of the table
# schema") and floe rewrite failed every group, so no rewrite could remove the delete
# either: the table was stuck. Now the drop is refused, naming the field, the delete file,
# its snapshot and branch and what to do (rewrite with remove-dangling-deletes), and nothing
# is committed; once the delete files are gone (main rewritten, the branch that kept one
# dropped) the drop goes through and scans give the same rows.
# A schema that drops such a column by another writer's hand (simulated: the metadata
# edited) is still refused at read time, with the field named, never answered wrongly;
# floe rewrite commits nothing then.
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
schema_has_n() { "$FLOE" table schema ns.t --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(any(f['name']=='n' for f in d['schema']['fields']))"; }
# a branch at the snapshot with the delete keeps it live after main is rewritten
"$FLOE" ref create ns.t keep > /dev/null
rc=0
"$FLOE" table schema ns.t drop-column n > drop.out 2> drop.err || rc=$?
[ "$rc" != 0 ] || fail "drop-column n went through with a live equality delete on it"
for want in "field 2" "eq-deletes.parquet" "remove-dangling-deletes"; do
    grep -q -- "$want" drop.err || fail "the refusal does not say '$want': $(cat drop.err)"
done
[ "$(schema_has_n)" = True ] || fail "the refused drop changed the schema"
[ "$(vs < <("$FLOE" scan ns.t))" = "2 3" ] || fail "after the refused drop: rows differ"
"$FLOE" rewrite ns.t --option rewrite-all=true --option min-input-files=1 \
    --option remove-dangling-deletes=true > rw1.out 2>&1 || fail "rewrite: $(cat rw1.out)"
rc=0
"$FLOE" table schema ns.t drop-column n > drop.out 2> drop.err || rc=$?
[ "$rc" != 0 ] || fail "drop-column n went through while branch keep holds the delete"
grep -q "branch keep" drop.err || fail "the refusal does not name branch keep: $(cat drop.err)"
"$FLOE" ref drop ns.t keep > /dev/null
"$FLOE" table schema ns.t drop-column n > drop.out 2> drop.err || fail "drop-column n once no delete uses it: $(cat drop.err)"
[ "$(schema_has_n)" = False ] || fail "n still in the schema after the drop"
[ "$(vs < <("$FLOE" scan ns.t))" = "2 3" ] || fail "after the drop: rows v=$(vs < <("$FLOE" scan ns.t)), want 2 3"
[ "$(vs < <("$FLOE" scan ns.t --where "k = 'a'"))" = "2" ] || fail "after the drop, k = 'a': want v=2"
# the snapshot from before, read with the schema it was written with, still has its delete
rc=0
"$FLOE" scan ns.t --snapshot "$snap" > old.ndjson 2> old.err || rc=$?
[ "$rc" = 0 ] || fail "snapshot $snap: $(cat old.err)"
[ "$(vs < old.ndjson)" = "2 3" ] || fail "snapshot $snap: rows v=$(vs < old.ndjson), want 2 3"

# Another writer's drop (the metadata edited as such a writer would commit it): the
# equality delete cannot be applied, so reads refuse naming the field, never answer wrong.
"$FLOE" table create ns.f --schema s.json > /dev/null
"$FLOE" append ns.f base.ndjson > /dev/null
"$UPSERT" "$tmp/catalog.db" dc "$tmp/wh" ns.f k,n @@keys.tsv > /dev/null
python3 - "$tmp/catalog.db" <<'PY'
import json, sqlite3, sys, urllib.parse
db = sqlite3.connect(sys.argv[1])
loc, = db.execute("select metadata_location from iceberg_tables where table_name='f'").fetchone()
path = urllib.parse.urlparse(loc).path
m = json.load(open(path))
cur = [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]
new = dict(cur, **{"schema-id": max(s["schema-id"] for s in m["schemas"]) + 1,
                   "fields": [f for f in cur["fields"] if f["name"] != "n"]})
m["schemas"].append(new)
m["current-schema-id"] = new["schema-id"]
out = path.replace(".metadata.json", "-dropped.metadata.json")
json.dump(m, open(out, "w"))
db.execute("update iceberg_tables set metadata_location=?, previous_metadata_location=? "
           "where table_name='f'", ("file://" + out, loc))
db.commit()
PY
rc=0
"$FLOE" scan ns.f > after.ndjson 2> after.err || rc=$?
if [ "$rc" = 0 ]; then
    [ "$(vs < after.ndjson)" = "2 3" ] || fail "foreign drop: rows v=$(vs < after.ndjson), want 2 3 (the delete is on (k, n) = ('a', 1))"
else
    grep -q "equality field 2" after.err || fail "foreign drop: scan refused without naming the field: $(cat after.err)"
fi
nsnaps() { "$FLOE" snapshots ns.f --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"; }
nsnap0=$(nsnaps)
"$FLOE" rewrite ns.f --option rewrite-all=true --option min-input-files=1 > rw.out 2>&1 || true
nsnap1=$(nsnaps)
[ "$nsnap1" = "$nsnap0" ] || fail "rewrite committed with a delete it cannot apply: $(cat rw.out)"
[ "$fails" = 0 ] || exit 1
echo "eq_delete_dropped_column: ok"
