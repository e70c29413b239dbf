#!/usr/bin/env bash
# rewrite_deletes.sh - floe rewrite-deletes NS.NAME: equality deletes (an upsert stream's,
# committed by tests/tools/eq_upsert.c through floe's library) and position delete files
# resolved into deletion vectors, checked against independent computations:
#   - the rows floe scan reads before and after are the upserts replayed in python from
#     the inputs (not from the table), row for row;
#   - after: no equality or position delete file is live, every data file has at most one
#     delete file, a deletion vector; the live rows computed without floe - each data file
#     read by DuckDB (tests/js/read_parquet.mjs), its vector decoded by the `roaring` npm
#     package (tests/js/dv_oracle.mjs) - are the replayed rows;
#   - the snapshot is a "replace" whose summary totals equal its manifests
#     (tests/js/summary_check.mjs, avsc); a second run, and a dry run, commit nothing;
#   - floe rewrite of the result (rewrite-all) reads the replayed rows, no delete file left;
#   - --where: a delete file that also applies to a data file left out stays;
#   - a v2 table with position delete files and equality deletes is refused with the
#     upgrade advice (exit 1, nothing committed); after floe table upgrade to v3 they become
#     vectors, the same rows;
#   - floe health recommends `floe rewrite-deletes` while equality deletes are live;
#   - floe maintain --once runs the rewrite-deletes job on a v3 table (the same checks),
#     skips it on a v2 table and when nothing is left to resolve;
#   - equality delete files a compaction left dangling (they apply to no live data file)
#     are removed: a "replace" commit of that alone, the rows unchanged, the totals 0.
# A commit racing between plan and commit is tested in tests/unit/test_delete.c (the
# commit's race hook), which the command line has no way to reach.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
UPSERT=${FLOE_EQ_UPSERT:-$root/build/floe_eq_upsert}
js=$root/tests/js
[ -x "$UPSERT" ] || { echo "rewrite_deletes: no floe_eq_upsert ($UPSERT), skipped"; exit 77; }
command -v node > /dev/null || { echo "rewrite_deletes: node missing, skipped"; exit 77; }
[ -d "$js/node_modules/roaring" ] || { echo "rewrite_deletes: tests/js not installed, skipped"; exit 77; }
[ -d "$js/node_modules/@duckdb/node-api" ] || { echo "rewrite_deletes: tests/js not installed, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=rd
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"v","required":false,"type":"long"}]}' > s.json

md() { "$FLOE" table describe "$1" --json |
       python3 -c "import json,sys; print(json.load(sys.stdin)['metadata_location'].removeprefix('file://'))"; }
summary() { # summary TABLE KEY: the current snapshot's summary value
    "$FLOE" snapshots "$1" --json | python3 -c "
import json,sys
s = [x for x in json.load(sys.stdin) if x.get('current')][0]
print(s['summary'].get('$2', '-'))"; }
nsnap() { "$FLOE" snapshots "$1" --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"; }
totals() { node "$js/summary_check.mjs" --metadata "$(md "$1")" > /dev/null || fail "$1: summary totals"; }
rows_of() { "$FLOE" scan "$1" | python3 -c "
import json,sys
for r in sorted((json.loads(l) for l in sys.stdin), key=lambda r: (r['k'], r['v'])): print(json.dumps(r, sort_keys=True))"; }

# The table's log: "base FILE" (rows appended), "up KEY [FILE]" (equality delete of KEY,
# then the rows of FILE); replayed, the rows a reader must see.
: > log
replay() { python3 - log <<'EOF'
import json, sys
live = []
for line in open(sys.argv[1]):
    op, *args = line.split()
    if op == 'up':
        live = [r for r in live if r['k'] != args[0]]
        args = args[1:]
    for f in args:
        live += [json.loads(l) for l in open(f)]
for r in sorted(live, key=lambda r: (r['k'], r['v'])): print(json.dumps(r, sort_keys=True))
EOF
}
n_up=0
# upsert TABLE KEY [V]: equality delete of k = KEY and, with V, the row {k: KEY, v: V},
# in one commit
upsert() {
    local t=$1 key=$2 v=${3:-} data=()
    n_up=$((n_up + 1))
    if [ -n "$v" ]; then
        echo "{\"k\":\"$key\",\"v\":$v}" > "up$n_up.ndjson"
        "$FLOE" convert --schema s.json -o "$tmp/wh/ns/${t#ns.}/data/up$n_up" "up$n_up.ndjson" > /dev/null
        data=("$tmp/wh/ns/${t#ns.}/data/up$n_up/part-00000.parquet")
        echo "up $key $tmp/up$n_up.ndjson" >> "${t#ns.}.log"
    else
        echo "up $key" >> "${t#ns.}.log"
    fi
    "$UPSERT" "$tmp/catalog.db" rd "$tmp/wh" "$t" k "$key" "${data[@]}" > /dev/null ||
        fail "$t: upsert $key"
}
# check_files TABLE LOG: every data file has at most one delete, a vector; the rows
# DuckDB reads from each data file less the vector's positions (roaring) are the replay
check_files() {
    "$FLOE" scan "$1" --plan --json > plan.json
    cp "$2" log
    replay > want
    python3 - "$js" <<'EOF' || fail "$1: files after rewrite-deletes (see above)"
import json, subprocess, sys
js = sys.argv[1]
plan = json.load(open('plan.json'))
blobs, live, bad = {}, [], 0
for f in plan['files']:
    rows = [json.loads(l) for l in subprocess.run(
        ['node', js + '/read_parquet.mjs', '--reader', 'duckdb', f['local_path']],
        check=True, capture_output=True, text=True).stdout.splitlines()]
    if len(f['deletes']) > 1:
        print('%s: %d delete files' % (f['path'], len(f['deletes']))); bad += 1
    gone = set()
    for d in f['deletes']:
        p = d['local_path'].removeprefix('file://')
        if not p.endswith('.puffin'):
            print('%s: a delete file that is no vector: %s (%s)' % (f['path'], p, d['content'])); bad += 1
            continue
        if p not in blobs:
            blobs[p] = [json.loads(l) for l in subprocess.run(
                ['node', js + '/dv_oracle.mjs', 'read', p], check=True, capture_output=True,
                text=True).stdout.splitlines()]
        mine = [b for b in blobs[p] if b['referenced'] == f['path']]
        if len(mine) != 1:
            print('%s: %d vectors for %s' % (p, len(mine), f['path'])); bad += 1
        gone |= {x for b in mine for x in b['positions']}
    live += [r for i, r in enumerate(rows) if i not in gone]
got = [json.dumps(r, sort_keys=True) for r in sorted(live, key=lambda r: (r['k'], r['v']))]
want = open('want').read().split('\n')[:-1]
if got != want:
    print('DuckDB + roaring read %d rows, the replay %d' % (len(got), len(want)))
    for a, b in zip(got, want):
        if a != b: print('  first difference:', a, b); break
    bad += 1
sys.exit(1 if bad else 0)
EOF
}
live_deletes() { # live_deletes TABLE: "<position files> <equality files> <vectors>"
    "$FLOE" scan "$1" --plan --json | python3 -c "
import json,sys
p = json.load(sys.stdin)
ds = {(d['path'], d['content']) for f in p['files'] for d in f['deletes']}
print(sum(1 for d in ds if d[1] == 'position' and not d[0].endswith('.puffin')),
      sum(1 for d in ds if d[1] == 'equality'),
      len({f['path'] for f in p['files'] for d in f['deletes'] if d['path'].endswith('.puffin')}))"; }

# ---- 1. v3: an upsert stream over one data file ------------------------------------------
"$FLOE" table create ns.v3 --schema s.json --property format-version=3 > /dev/null
python3 -c '[print("{\"k\":\"r%d\",\"v\":%d}" % (j, j)) for j in range(40)]' > base.ndjson
"$FLOE" append ns.v3 base.ndjson > /dev/null
echo "base $tmp/base.ndjson" > v3.log
for i in $(seq 0 11); do upsert ns.v3 "r$i" $((1000 + i)); done
upsert ns.v3 r3 2003          # a key upserted again: deletes the row an upsert added
upsert ns.v3 r39              # a delete without a new row
upsert ns.v3 nokey 7          # a key no row had
cp v3.log log
replay > want
rows_of ns.v3 > before
cmp -s before want || fail "v3: rows before rewrite-deletes differ from the replay"
[ "$(summary ns.v3 operation)" = overwrite ] || fail "v3: upsert operation $(summary ns.v3 operation)"
[ "$(live_deletes ns.v3)" = "0 15 0" ] || fail "v3: deletes before: $(live_deletes ns.v3)"
# floe health recommends it while equality deletes are live (and not after, below)
rec_of() { "$FLOE" health "$1" --json --no-listing | python3 -c "
import json,sys
print(' '.join(r['command'] for r in json.load(sys.stdin)['recommendations'] if r['kind'] == 'rewrite-deletes'))"; }
[ "$(rec_of ns.v3)" = "floe rewrite-deletes ns.v3" ] || fail "v3: health recommends '$(rec_of ns.v3)'"
n=$(nsnap ns.v3)
out=$("$FLOE" rewrite-deletes ns.v3 --dry-run --json) || fail "v3: dry run failed: $out"
echo "$out" | grep -q '"equality_delete_files_removed":15' || fail "v3: dry run: $out"
[ "$(nsnap ns.v3)" = "$n" ] || fail "v3: the dry run committed"
out=$("$FLOE" rewrite-deletes ns.v3 --json) || fail "v3: rewrite-deletes failed: $out"
# the base file's vector holds r0..r11 and r39; the file the first r3 upsert added has no
# row left: it goes
for want_kv in '"equality_delete_files_removed":15' '"rows_resolved":14' '"dvs_added":1' \
               '"data_files_removed":1' '"plans":1'; do
    echo "$out" | grep -q "$want_kv" || fail "v3: rewrite-deletes answer lacks $want_kv: $out"
done
rows_of ns.v3 > after
cmp -s after before || fail "v3: rows after rewrite-deletes differ from before"
[ "$(live_deletes ns.v3)" = "0 0 1" ] || fail "v3: deletes after: $(live_deletes ns.v3)"
check_files ns.v3 v3.log
[ -z "$(rec_of ns.v3)" ] || fail "v3: health still recommends rewrite-deletes"
[ "$(summary ns.v3 operation)" = replace ] || fail "v3: operation $(summary ns.v3 operation)"
[ "$(summary ns.v3 removed-equality-delete-files)" = 15 ] || fail "v3: removed-equality-delete-files"
[ "$(summary ns.v3 total-equality-deletes)" = 0 ] || fail "v3: total-equality-deletes"
[ "$(summary ns.v3 added-dvs)" = 1 ] || fail "v3: added-dvs"
[ "$(summary ns.v3 deleted-data-files)" = 1 ] || fail "v3: deleted-data-files"
totals ns.v3
n=$(nsnap ns.v3)
out=$("$FLOE" rewrite-deletes ns.v3) || fail "v3: second run failed"
echo "$out" | grep -q 'nothing done' || fail "v3: second run said: $out"
[ "$(nsnap ns.v3)" = "$n" ] || fail "v3: the second run committed"
# more upserts on the vectors: merged into them, one vector per file still
upsert ns.v3 r20 3020
upsert ns.v3 r5
out=$("$FLOE" rewrite-deletes ns.v3 --json) || fail "v3: third run failed: $out"
for want_kv in '"dvs_removed":1' '"data_files_removed":1' '"equality_delete_files_removed":2'; do
    echo "$out" | grep -q "$want_kv" || fail "v3: third run answer lacks $want_kv: $out"
done
cp v3.log log
replay > want
rows_of ns.v3 > after
cmp -s after want || fail "v3: rows after the third run differ from the replay"
check_files ns.v3 v3.log
totals ns.v3
# compaction of the result: the replayed rows, no delete file
"$FLOE" rewrite ns.v3 --option rewrite-all=true > /dev/null || fail "v3: floe rewrite"
rows_of ns.v3 > after
cmp -s after want || fail "v3: rows after floe rewrite differ from the replay"
[ "$(live_deletes ns.v3)" = "0 0 0" ] || fail "v3: deletes after floe rewrite: $(live_deletes ns.v3)"

# ---- 2. --where: a delete file that applies to a file left out stays ---------------------
"$FLOE" table create ns.w --schema s.json --property format-version=3 > /dev/null
python3 -c '[print("{\"k\":\"a%d\",\"v\":%d}" % (j, j)) for j in range(10)]' > wa.ndjson
python3 -c '[print("{\"k\":\"b%d\",\"v\":%d}" % (j, 100 + j)) for j in range(10)]' > wb.ndjson
"$FLOE" append ns.w wa.ndjson > /dev/null
"$FLOE" append ns.w wb.ndjson > /dev/null
printf 'base %s\nbase %s\n' "$tmp/wa.ndjson" "$tmp/wb.ndjson" > w.log
upsert ns.w a1
upsert ns.w b2
rows_of ns.w > before
out=$("$FLOE" rewrite-deletes ns.w --where "v < 50" --json) || fail "w: rewrite-deletes --where: $out"
echo "$out" | grep -q '"data_files_resolved":1' || fail "w: --where resolved: $out"
echo "$out" | grep -q '"equality_delete_files_removed":0' || fail "w: --where removed deletes the other file needs: $out"
rows_of ns.w > after
cmp -s after before || fail "w: rows after --where differ"
# the delete file stays for the file left out; the file resolved keeps its vector, so the
# same run again is a no-op (it used to write the same vector again on every run)
n=$(nsnap ns.w)
out=$("$FLOE" rewrite-deletes ns.w --where "v < 50" --json) || fail "w: second --where: $out"
echo "$out" | grep -q '"noop":true' || fail "w: second --where is not a no-op: $out"
[ "$(nsnap ns.w)" = "$n" ] || fail "w: the second --where committed"
"$FLOE" rewrite-deletes ns.w > /dev/null || fail "w: rewrite-deletes"
[ "$(live_deletes ns.w)" = "0 0 2" ] || fail "w: deletes after: $(live_deletes ns.w)"
check_files ns.w w.log

# ---- 3. v2: refused; upgraded to v3, position and equality deletes become vectors --------
"$FLOE" table create ns.v2 --schema s.json > /dev/null
"$FLOE" append ns.v2 base.ndjson > /dev/null
echo "base $tmp/base.ndjson" > v2.log
"$FLOE" delete ns.v2 --where "v < 3" > /dev/null || fail "v2: delete"
"$FLOE" delete ns.v2 --where "v = 30" > /dev/null || fail "v2: second delete"
for k in r0 r1 r2 r30; do echo "up $k" >> v2.log; done
upsert ns.v2 r7 707
upsert ns.v2 r8
rows_of ns.v2 > before
cp v2.log log
replay > want
cmp -s before want || fail "v2: rows before differ from the replay"
[ "$(live_deletes ns.v2)" = "2 2 0" ] || fail "v2: deletes before: $(live_deletes ns.v2)"
n=$(nsnap ns.v2)
if out=$("$FLOE" rewrite-deletes ns.v2 2>&1); then
    fail "v2: rewrite-deletes on a v2 table succeeded: $out"
fi
echo "$out" | grep -q 'format-version 3' || fail "v2: refusal does not say how to upgrade: $out"
[ "$(nsnap ns.v2)" = "$n" ] || fail "v2: the refusal committed"
"$FLOE" table upgrade ns.v2 --format-version 3 > /dev/null || fail "v2: upgrade"
out=$("$FLOE" rewrite-deletes ns.v2 --json) || fail "v2: rewrite-deletes after upgrade: $out"
echo "$out" | grep -q '"position_delete_files_removed":2' || fail "v2: position files: $out"
echo "$out" | grep -q '"equality_delete_files_removed":2' || fail "v2: equality files: $out"
rows_of ns.v2 > after
cmp -s after before || fail "v2: rows after rewrite-deletes differ"
[ "$(live_deletes ns.v2)" = "0 0 1" ] || fail "v2: deletes after: $(live_deletes ns.v2)"
check_files ns.v2 v2.log
totals ns.v2

# ---- 4. floe maintain runs it (v3), skips it (v2, nothing to resolve) ---------------------
"$FLOE" table create ns.m --schema s.json --property format-version=3 > /dev/null
"$FLOE" table create ns.v2x --schema s.json > /dev/null
"$FLOE" append ns.m base.ndjson > /dev/null
echo "base $tmp/base.ndjson" > m.log
for i in 1 2 3 4 5 6 7 8 9 10 11; do upsert ns.m "r$i" $((500 + i)); done
rows_of ns.m > before
printf "[defaults]\norphans.enabled = false\nexpire.enabled = false\nrewrite-data.enabled = false\n" > maint.conf
"$FLOE" maintain ns.m ns.v2x --once --json --schedule maint.conf > runs.json 2> maint.err ||
    fail "m: maintain: $(cat maint.err)"
python3 - runs.json <<'EOF2' || fail "m: maintain's rewrite-deletes run (see above)"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rd = [r for r in runs if r.get('job') == 'rewrite-deletes']
m = [r for r in rd if r['table'] == 'ns.m']
v2 = [r for r in rd if r['table'] == 'ns.v2x']
assert len(m) == 1 and m[0]['result'] == 'ok', rd
assert m[0]['files_deleted'] == 11 and m[0]['files_written'] == 1 and m[0]['commits'] == 1, m
assert len(v2) == 1 and v2[0]['result'] == 'skipped' and 'format v2' in v2[0]['detail'], v2
EOF2
rows_of ns.m > after
cmp -s after before || fail "m: rows after maintain differ"
[ "$(live_deletes ns.m)" = "0 0 1" ] || fail "m: deletes after maintain: $(live_deletes ns.m)"
check_files ns.m m.log
"$FLOE" maintain ns.m --once --json --schedule maint.conf > runs.json 2> maint.err ||
    fail "m: second maintain: $(cat maint.err)"
grep '"job":"rewrite-deletes"' runs.json | grep -q '"result":"skipped"' ||
    fail "m: second maintain did not skip rewrite-deletes: $(cat runs.json)"

# ---- 5. dangling deletes: after a compaction nothing pairs with them; removed ----------
"$FLOE" table create ns.dg --schema s.json --property format-version=3 > /dev/null
"$FLOE" append ns.dg base.ndjson > /dev/null
echo "base $tmp/base.ndjson" > dg.log
upsert ns.dg r1 101
upsert ns.dg r2
# the compaction applies the deletes; its files keep the starting sequence number, so
# the equality delete files (no newer than them) apply to nothing, and stay
"$FLOE" rewrite ns.dg --option rewrite-all=true > /dev/null || fail "dg: floe rewrite"
cp dg.log log
replay > want
rows_of ns.dg > before
cmp -s before want || fail "dg: rows after floe rewrite differ from the replay"
[ "$(live_deletes ns.dg)" = "0 0 0" ] || fail "dg: deletes paired after floe rewrite: $(live_deletes ns.dg)"
[ "$(summary ns.dg total-equality-deletes)" = 2 ] ||
    fail "dg: total-equality-deletes after floe rewrite: $(summary ns.dg total-equality-deletes)"
out=$("$FLOE" rewrite-deletes ns.dg --dry-run --json) || fail "dg: dry run: $out"
echo "$out" | grep -q '"equality_delete_files_removed":2' || fail "dg: dry run: $out"
n=$(nsnap ns.dg)
out=$("$FLOE" rewrite-deletes ns.dg --json) || fail "dg: rewrite-deletes: $out"
for want_kv in '"noop":false' '"equality_delete_files_removed":2' '"dvs_added":0' \
               '"data_files_resolved":0'; do
    echo "$out" | grep -q "$want_kv" || fail "dg: rewrite-deletes answer lacks $want_kv: $out"
done
[ "$(nsnap ns.dg)" = $((n + 1)) ] || fail "dg: rewrite-deletes did not commit once"
[ "$(summary ns.dg operation)" = replace ] || fail "dg: operation $(summary ns.dg operation)"
[ "$(summary ns.dg removed-equality-delete-files)" = 2 ] || fail "dg: removed-equality-delete-files"
[ "$(summary ns.dg total-equality-deletes)" = 0 ] || fail "dg: total-equality-deletes"
[ "$(summary ns.dg total-delete-files)" = 0 ] || fail "dg: total-delete-files"
totals ns.dg
rows_of ns.dg > after
cmp -s after before || fail "dg: rows after rewrite-deletes differ"
out=$("$FLOE" rewrite-deletes ns.dg) || fail "dg: second run"
echo "$out" | grep -q 'nothing done' || fail "dg: second run said: $out"

# ---- 6. usage --------------------------------------------------------------------------
rc=0; "$FLOE" rewrite-deletes > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "no table: exit $rc, expected 2"
rc=0; "$FLOE" rewrite-deletes ns.v3 --bogus > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "unknown option: exit $rc, expected 2"
rc=0; "$FLOE" rewrite-deletes ns.v3 --where "nosuch = 1" > /dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "bad --where accepted"

if [ "$fails" -gt 0 ]; then
    echo "rewrite_deletes: $fails failure(s)"
    exit 1
fi
echo "rewrite_deletes: ok"
