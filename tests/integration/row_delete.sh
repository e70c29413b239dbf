#!/usr/bin/env bash
# row_delete.sh - floe delete NS.NAME --where (row-level deletes) on format v3 tables
# (deletion vectors) and v2 tables (position delete files), partitioned and not, checked
# against independent computations:
#   - the rows floe scan reads after each delete equal the original NDJSON filtered by
#     every delete's predicate (python, from the input files, not from the table);
#   - each deletion vector, decoded by the `roaring` npm package (tests/js/dv_oracle.mjs,
#     CRoaring's port), holds exactly the positions of the data file's deleted rows, the
#     rows read in file order by DuckDB (tests/js/read_parquet.mjs);
#   - each position delete file, read by DuckDB, is sorted by file_path then pos, covers
#     one partition and holds the positions of the rows deleted;
#   - at most one deletion vector per data file is live after every delete (a second
#     delete on a file merges with its vector, which is removed in the same commit; on a
#     table upgraded from v2, the vector takes in the file's position deletes and the
#     position delete file scoped to it goes); a data file with no row left is removed
#     with its vector;
#   - the snapshot is a "delete" with the spec's summary counts; the totals equal the
#     manifests (tests/js/summary_check.mjs, avsc);
#   - row lineage: surviving rows keep _row_id and _last_updated_sequence_number;
#   - expire and orphans keep the Puffin files live entries reference; floe rewrite
#     afterwards leaves the same rows, no delete file, the same lineage;
#   - a delete on a branch leaves main alone; v1 tables and usage errors are refused
#     (exit 1 / 2), a filter that matches nothing commits nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
conf=${FLOE_CONFORMANCE:-$root/../shared/conformance}/iceberg
js=$root/tests/js
[ -d "$conf" ] || { echo "missing conformance folder $conf"; exit 1; }
command -v node > /dev/null || { echo "row_delete: node missing, skipped"; exit 77; }
[ -d "$js/node_modules/roaring" ] || { echo "row_delete: tests/js not installed, skipped"; exit 77; }
[ -d "$js/node_modules/@duckdb/node-api" ] || { echo "row_delete: tests/js not installed, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="sqlite:///$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
cat > schema.json <<'EOF'
{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"user","required":false,"type":"string"},
 {"id":3,"name":"kind","required":false,"type":"string"}]}
EOF
# rows FILE FROM TO: ids FROM..TO-1, user u<id % 10>, kind k<id % 3>
rows() {
    python3 -c "
import json, sys
for i in range($2, $3):
    print(json.dumps({'id': i, 'user': 'u%d' % (i % 10), 'kind': 'k%d' % (i % 3)}))" > "$1"
}
rows in1.ndjson 0 200
rows in2.ndjson 200 400

md() { "$FLOE" table describe "$1" --json |
       python3 -c "import json,sys; print(json.load(sys.stdin)['metadata_location'].removeprefix('file://'))"; }
scan_ids() { "$FLOE" scan "$1" --columns id | python3 -c "
import json,sys
print(' '.join(str(i) for i in sorted(json.loads(l)['id'] for l in sys.stdin)))"; }
# oracle PREDS_FILE: the ids of the input rows no predicate (python expressions over r)
# holds for
oracle() { python3 - "$1" <<'EOF'
import json, sys
preds = [l.strip() for l in open(sys.argv[1]) if l.strip()]
out = []
for f in ('in1.ndjson', 'in2.ndjson'):
    for l in open(f):
        r = json.loads(l)
        if not any(eval(p, {}, {'r': r}) for p in preds):
            out.append(r['id'])
print(' '.join(str(i) for i in sorted(out)))
EOF
}
summary() { # summary TABLE KEY: the current snapshot's summary value
    "$FLOE" snapshots "$1" --json | python3 -c "
import json,sys
s = [x for x in json.load(sys.stdin) if x.get('current')][0]
print(s['summary'].get('$2', '-'))"; }
nsnap() { "$FLOE" snapshots "$1" --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"; }
plan() { "$FLOE" scan "$1" --plan --json > "$tmp/plan.json"; }
# check_dvs TABLE PREDS: every data file has at most one delete, a vector whose positions
# (roaring) are those of the file's rows (DuckDB, file order) some predicate holds for
check_dvs() { plan "$1"; python3 - "$2" "$js" <<'EOF' || fail "$1: deletion vectors (see above)"
import json, subprocess, sys
preds = [l.strip() for l in open(sys.argv[1]) if l.strip()]
js = sys.argv[2]
plan = json.load(open('plan.json'))
blobs = {}
bad = 0
for f in plan['files']:
    if len(f['deletes']) > 1:
        print('data file %s has %d delete files' % (f['path'], len(f['deletes']))); bad += 1
    rows = [json.loads(l) for l in subprocess.run(
        ['node', js + '/read_parquet.mjs', '--reader', 'duckdb', f['local_path']],
        check=True, capture_output=True, text=True).stdout.splitlines()]
    want = [i for i, r in enumerate(rows) if any(eval(p, {}, {'r': r}) for p in preds)]
    got = []
    for d in f['deletes']:
        p = d['local_path'].removeprefix('file://')
        if p not in blobs:
            blobs[p] = [json.loads(l) for l in subprocess.run(
                ['node', js + '/dv_oracle.mjs', 'read', p], check=True, capture_output=True,
                text=True).stdout.splitlines()]
        mine = [b for b in blobs[p] if b['referenced'] == f['path']]
        if len(mine) != 1:
            print('%s: %d vectors for %s' % (p, len(mine), f['path'])); bad += 1
        got += [x for b in mine for x in b['positions']]
    if sorted(got) != want:
        print('%s: vector %s, expected %s' % (f['path'], sorted(got)[:20], want[:20])); bad += 1
sys.exit(1 if bad else 0)
EOF
}
# check_posdeletes TABLE PREDS: position delete files (DuckDB) sorted by file_path, pos,
# one partition each; together with the deletes of every data file they hold exactly the
# positions of its rows the predicates hold for
check_posdeletes() { plan "$1"; python3 - "$2" "$js" <<'EOF' || fail "$1: position deletes (see above)"
import json, subprocess, sys
preds = [l.strip() for l in open(sys.argv[1]) if l.strip()]
js = sys.argv[2]
plan = json.load(open('plan.json'))
files = {}
bad = 0
for f in plan['files']:
    rows = [json.loads(l) for l in subprocess.run(
        ['node', js + '/read_parquet.mjs', '--reader', 'duckdb', f['local_path']],
        check=True, capture_output=True, text=True).stdout.splitlines()]
    want = [i for i, r in enumerate(rows) if any(eval(p, {}, {'r': r}) for p in preds)]
    got = []
    for d in f['deletes']:
        p = d['local_path'].removeprefix('file://')
        if p not in files:
            files[p] = [json.loads(l) for l in subprocess.run(
                ['node', js + '/read_parquet.mjs', '--reader', 'duckdb', p], check=True,
                capture_output=True, text=True).stdout.splitlines()]
            keys = [(r['file_path'], r['pos']) for r in files[p]]
            if keys != sorted(keys) or len(set(keys)) != len(keys):
                print('%s: not sorted by file_path, pos' % p); bad += 1
            parts = {k[0].rsplit('/', 1)[0] for k in keys}
            if len(parts) != 1:
                print('%s: rows of %d partition folders' % (p, len(parts))); bad += 1
        got += [r['pos'] for r in files[p] if r['file_path'] == f['path']]
    if sorted(got) != want:
        print('%s: position deletes %s, expected %s' % (f['path'], sorted(got)[:20], want[:20])); bad += 1
sys.exit(1 if bad else 0)
EOF
}
totals() { node "$js/summary_check.mjs" --metadata "$(md "$1")" > /dev/null || fail "$1: summary totals"; }
# del TABLE SQL PY: delete with floe (its --json answer in $out), record the predicate
# for the oracles, compare the rows
out=
del() {
    local t=$1 sql=$2 py=$3 preds=$tmp/${1#ns.}.preds
    out=$("$FLOE" delete "$t" --where "$sql" --json) || { fail "$t: delete $sql failed: $out"; return; }
    echo "$py" >> "$preds"
    [ "$(scan_ids "$t")" = "$(oracle "$preds")" ] || fail "$t: rows after delete $sql differ from the oracle"
}
lineage() { "$FLOE" scan "$1" --columns id,_row_id,_last_updated_sequence_number | python3 -c "
import json,sys
for r in sorted((json.loads(l) for l in sys.stdin), key=lambda r: r['id']):
    print(r['id'], r['_row_id'], r['_last_updated_sequence_number'])"; }
survivors() { # survivors LINEAGE_FILE IDS: the lines of the ids still there
    python3 -c "
import sys
keep = set(sys.argv[2].split())
for l in open(sys.argv[1]):
    if l.split()[0] in keep: print(l, end='')" "$1" "$2"; }

# ---- 1. v3, unpartitioned ----------------------------------------------------------------
"$FLOE" table create ns.v3 --schema schema.json --property format-version=3 > /dev/null
"$FLOE" append ns.v3 in1.ndjson > /dev/null
"$FLOE" append ns.v3 in2.ndjson > /dev/null
: > v3.preds
lineage ns.v3 > lin0
del ns.v3 "user = 'u3'" "r['user'] == 'u3'"
echo "$out" | grep -q '"rows_deleted":40' || fail "v3: first delete: $out"
[ "$(summary ns.v3 operation)" = delete ] || fail "v3: operation $(summary ns.v3 operation)"
[ "$(summary ns.v3 added-dvs)" = 2 ] || fail "v3: added-dvs $(summary ns.v3 added-dvs)"
[ "$(summary ns.v3 added-delete-files)" = 2 ] || fail "v3: added-delete-files"
[ "$(summary ns.v3 added-position-deletes)" = 40 ] || fail "v3: added-position-deletes"
[ "$(summary ns.v3 floe.delete.rows)" = 40 ] || fail "v3: floe.delete.rows"
check_dvs ns.v3 v3.preds
totals ns.v3
# the same files again: merged, one vector each, the old ones removed
del ns.v3 "id < 10 OR id = 250" "r['id'] < 10 or r['id'] == 250"
echo "$out" | grep -q '"rows_deleted":10' || fail "v3: second delete (u3 rows not again): $out"
[ "$(summary ns.v3 removed-dvs)" = 2 ] || fail "v3: removed-dvs $(summary ns.v3 removed-dvs)"
[ "$(summary ns.v3 added-position-deletes)" = 50 ] || fail "v3: merged vectors hold 50"
[ "$(summary ns.v3 total-delete-files)" = 2 ] || fail "v3: total-delete-files"
check_dvs ns.v3 v3.preds
totals ns.v3
# nothing matches / dry run: no snapshot
n=$(nsnap ns.v3)
out=$("$FLOE" delete ns.v3 --where "user = 'nobody'") || fail "v3: empty delete failed"
echo "$out" | grep -q 'nothing deleted' || fail "v3: empty delete said: $out"
out=$("$FLOE" delete ns.v3 --where "id >= 300" --dry-run --json) || fail "v3: dry run failed"
echo "$out" | grep -q '"rows_deleted":90' || fail "v3: dry run: $out"
[ "$(nsnap ns.v3)" = "$n" ] || fail "v3: an empty delete or a dry run committed"
# every row of the second file: the file goes with its vector
del ns.v3 "id >= 200" "r['id'] >= 200"
echo "$out" | grep -q '"data_files_removed":1' || fail "v3: whole file: $out"
[ "$(summary ns.v3 deleted-data-files)" = 1 ] || fail "v3: deleted-data-files"
[ "$(summary ns.v3 removed-dvs)" = 1 ] || fail "v3: the removed file's vector stays"
plan ns.v3
python3 -c "import json; p=json.load(open('plan.json')); assert p['data_files']==1 and p['delete_files']==1, p" ||
    fail "v3: after the whole-file delete: $(head -c 300 plan.json)"
check_dvs ns.v3 v3.preds
totals ns.v3
# row lineage of the survivors unchanged
ids=$(scan_ids ns.v3)
lineage ns.v3 > lin1
survivors lin0 "$ids" | cmp -s - lin1 || fail "v3: _row_id / _last_updated_sequence_number changed"
# expire and orphans keep the Puffin files live entries reference
"$FLOE" expire ns.v3 --older-than 0s --retain-last 1 > /dev/null || fail "v3: expire"
"$FLOE" orphans ns.v3 --older-than 0s --force > /dev/null || fail "v3: orphans"
plan ns.v3
python3 -c "
import json, os
p = json.load(open('plan.json'))
for f in p['files']:
    for d in f['deletes']:
        assert os.path.exists(d['local_path'].removeprefix('file://')), d
" || fail "v3: expire/orphans deleted a live Puffin file"
[ "$(ls "$tmp"/wh/ns/v3/data/*.puffin | wc -l)" = 1 ] || fail "v3: unreferenced Puffin files left: $(ls "$tmp"/wh/ns/v3/data/*.puffin)"
[ "$(scan_ids ns.v3)" = "$ids" ] || fail "v3: rows changed by expire/orphans"
# rewrite: the rows stay, the vectors go, lineage stays
"$FLOE" rewrite ns.v3 --option rewrite-all=true > /dev/null || fail "v3: rewrite"
[ "$(scan_ids ns.v3)" = "$ids" ] || fail "v3: rows changed by the rewrite"
plan ns.v3
python3 -c "import json; p=json.load(open('plan.json')); assert p['delete_files']==0, p" ||
    fail "v3: delete files left after the rewrite"
lineage ns.v3 | cmp -s - lin1 || fail "v3: lineage changed by the rewrite"
totals ns.v3

# ---- 2. v3 partitioned by kind, and a branch ------------------------------------------------
"$FLOE" table create ns.p3 --schema schema.json --partition kind --property format-version=3 > /dev/null
"$FLOE" append ns.p3 in1.ndjson > /dev/null
"$FLOE" append ns.p3 in2.ndjson > /dev/null
: > p3.preds
del ns.p3 "user = 'u1' AND id > 50" "r['user'] == 'u1' and r['id'] > 50"
check_dvs ns.p3 p3.preds
del ns.p3 "kind = 'k0' OR id = 7" "r['kind'] == 'k0' or r['id'] == 7"
echo "$out" | grep -q '"data_files_removed":2' || fail "p3: partition k0's two files not removed: $out"
echo "$out" | grep -q '"files_scanned":4' || fail "p3: partition pruning: $out"
check_dvs ns.p3 p3.preds
totals ns.p3
"$FLOE" ref create ns.p3 audit > /dev/null
main_ids=$(scan_ids ns.p3)
"$FLOE" delete ns.p3 --where "id < 100" --branch audit > /dev/null || fail "p3: delete on a branch"
[ "$(scan_ids ns.p3)" = "$main_ids" ] || fail "p3: a delete on branch audit changed main"
grep -q . <<< "$("$FLOE" scan ns.p3 --ref audit --where "id < 100")" && fail "p3: branch audit still has ids < 100"
"$FLOE" delete ns.p3 --where "id < 100" --branch nope > /dev/null 2>&1 && fail "p3: unknown branch accepted"

# ---- 3. v2 partitioned: position delete files ------------------------------------------------
"$FLOE" table create ns.p2 --schema schema.json --partition kind > /dev/null
"$FLOE" append ns.p2 in1.ndjson > /dev/null
"$FLOE" append ns.p2 in2.ndjson > /dev/null
: > p2.preds
del ns.p2 "user = 'u3'" "r['user'] == 'u3'"
[ "$(summary ns.p2 added-position-delete-files)" = 3 ] || fail "p2: one position delete file per partition"
[ "$(summary ns.p2 added-position-deletes)" = 40 ] || fail "p2: added-position-deletes"
check_posdeletes ns.p2 p2.preds
del ns.p2 "user = 'u4' OR id < 5" "r['user'] == 'u4' or r['id'] < 5"
check_posdeletes ns.p2 p2.preds
del ns.p2 "kind = 'k1'" "r['kind'] == 'k1'"
echo "$out" | grep -q '"data_files_removed":2' || fail "p2: whole files: $out"
totals ns.p2
ids=$(scan_ids ns.p2)
"$FLOE" rewrite ns.p2 --option rewrite-all=true --option remove-dangling-deletes=true > /dev/null ||
    fail "p2: rewrite"
[ "$(scan_ids ns.p2)" = "$ids" ] || fail "p2: rows changed by the rewrite"
plan ns.p2
python3 -c "import json; p=json.load(open('plan.json')); assert p['delete_files']==0, p" ||
    fail "p2: delete files left after the rewrite"
totals ns.p2

# ---- 4. v2 unpartitioned: one position delete file for both data files -------------------------
"$FLOE" table create ns.u2 --schema schema.json > /dev/null
"$FLOE" append ns.u2 in1.ndjson > /dev/null
"$FLOE" append ns.u2 in2.ndjson > /dev/null
: > u2.preds
del ns.u2 "user IN ('u2', 'u5')" "r['user'] in ('u2', 'u5')"
[ "$(summary ns.u2 added-position-delete-files)" = 1 ] || fail "u2: one position delete file"
check_posdeletes ns.u2 u2.preds
totals ns.u2

# ---- 4b. v2 upgraded to v3: a vector takes in the file's position deletes -------------------
"$FLOE" table create ns.up --schema schema.json > /dev/null
"$FLOE" append ns.up in1.ndjson > /dev/null
"$FLOE" append ns.up in2.ndjson > /dev/null
: > up.preds
del ns.up "user = 'u6' AND id < 200" "r['user'] == 'u6' and r['id'] < 200"
[ "$(summary ns.up added-position-delete-files)" = 1 ] || fail "up: one position delete file"
"$FLOE" table upgrade ns.up --format-version 3 > /dev/null || fail "up: upgrade"
del ns.up "id = 3 OR id = 203" "r['id'] in (3, 203)"
echo "$out" | grep -q '"rows_deleted":2' || fail "up: $out"
[ "$(summary ns.up added-dvs)" = 2 ] || fail "up: added-dvs"
[ "$(summary ns.up removed-position-delete-files)" = 1 ] ||
    fail "up: the position delete file scoped to the first file stays"
[ "$(summary ns.up added-position-deletes)" = 22 ] || fail "up: the vector lacks the old positions"
check_dvs ns.up up.preds
totals ns.up

# ---- 5. refusals -------------------------------------------------------------------------------
cp -r "$conf/duckdb-iceberg/iceberg/lineitem_iceberg_gz" "$tmp/li"
"$FLOE" table register ns.li "$tmp/li/metadata/v2.gz.metadata.json" > /dev/null
set +e
err=$("$FLOE" delete ns.li --where "l_orderkey = 1" 2>&1); rc=$?
[ $rc = 1 ] && echo "$err" | grep -q 'format v1' || fail "v1 table: exit $rc: $err"
"$FLOE" delete ns.v3 > /dev/null 2>&1; [ $? = 2 ] || fail "no --where: not a usage error"
"$FLOE" delete ns.v3 --where "nope = 1" > /dev/null 2>&1; [ $? = 2 ] || fail "unknown column: not a usage error"
"$FLOE" delete ns.v3 --where "id = 1" --frobnicate > /dev/null 2>&1; [ $? = 2 ] || fail "unknown option: not a usage error"
"$FLOE" delete ns.v3 --where > /dev/null 2>&1; [ $? = 2 ] || fail "--where without a value: not a usage error"
"$FLOE" delete --help | grep -q 'deletion' || fail "--help"
set -e

if [ "$fails" -gt 0 ]; then
    echo "row_delete: $fails failure(s)"
    exit 1
fi
echo "row_delete: ok"
