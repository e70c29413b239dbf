#!/usr/bin/env bash
# row_lineage.sh - format v3 row lineage (spec "Row Lineage") through every floe commit
# path that moves rows or manifests, checked against an independent derivation.
#
# 1. A table created with --property format-version=3: append, append, rewrite-manifests,
#    rewrite (compaction), append, rewrites, an append to a branch and its cherry-pick
#    into main. After each commit on main:
#    - the metadata has next-row-id, and every snapshot first-row-id and added-rows within
#      it (python json);
#    - floe scan --columns id,_row_id,_last_updated_sequence_number prints what
#      tests/js/lineage_oracle.mjs derives from the files (avsc reads the manifest list and
#      manifests, DuckDB the data files, inheritance done from the spec), which also
#      checks that every data manifest has first_row_id, ranges do not overlap and no two
#      live rows share a _row_id;
#    - every row keeps the _row_id and _last_updated_sequence_number it had (no commit
#      here modifies a row), and the rows an append adds get fresh ids and that append's
#      sequence number;
#    - icebird (an independent reader) reads the same rows as floe scan.
# 2. A v2 table upgraded with floe table upgrade --format-version 3: next-row-id 0, its
#    rows read with null lineage until the next commit assigns ids to the existing files;
#    a v1 table (the conformance lineitem table) upgrades to v3 directly.
# 3. The conformance v3 table (legacy_bare_deletion_vector): its snapshot from before the
#    upgrade reads with null lineage; the current one is refused naming the bare DV file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
conf=${FLOE_CONFORMANCE:-$root/../shared/conformance}/iceberg
js=$root/tests/js
[ -d "$conf" ] || { echo "missing conformance folder $conf"; exit 1; }
command -v node > /dev/null || { echo "row_lineage: node missing, skipped"; exit 77; }
[ -d "$js/node_modules/@duckdb/node-api" ] || { echo "row_lineage: tests/js not installed, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="sqlite:///$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
cat > schema.json <<'EOF'
{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"name","required":false,"type":"string"}]}
EOF
rows() { # rows FILE FROM TO
    local i
    for ((i = $2; i < $3; i++)); do printf '{"id":%d,"name":"n%d"}\n' "$i" "$i"; done > "$1"
}
md() { "$FLOE" table describe "$1" --json |
       python3 -c "import json,sys; print(json.load(sys.stdin)['metadata_location'].removeprefix('file://'))"; }
# lineage TABLE: "id row_id seq" per live row, sorted by id (floe scan)
lineage() { "$FLOE" scan "$1" --columns id,_row_id,_last_updated_sequence_number |
            python3 -c "
import json,sys
for r in sorted((json.loads(l) for l in sys.stdin), key=lambda r: r['id']):
    print(r['id'], r['_row_id'], r['_last_updated_sequence_number'])"; }
oracle() { node "$js/lineage_oracle.mjs" "$1" id | python3 -c "
import json,sys
for r in sorted((json.loads(l) for l in sys.stdin), key=lambda r: int(r['id'])):
    print(r['id'], r['_row_id'] if r['_row_id'] is not None else None,
          r['_last_updated_sequence_number'] if r['_last_updated_sequence_number'] is not None else None)"; }
check_meta() { python3 - "$1" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
assert m['format-version'] == 3, m['format-version']
nxt = m['next-row-id']
for s in m['snapshots']:
    f, a = s.get('first-row-id'), s.get('added-rows')
    assert f is not None and a is not None, 'snapshot %s without row lineage' % s['snapshot-id']
    assert f + a <= nxt, 'snapshot %s: %s + %s > next-row-id %s' % (s['snapshot-id'], f, a, nxt)
print(m['last-sequence-number'])
EOF
}

# step LABEL: compare floe scan with the oracle and with the previous step's rows; rows
# not seen before must carry the sequence number of the last commit
prev=$tmp/prev
: > "$prev"
step() {
    local label=$1 before=$fails m seq
    m=$(md ns.t)
    seq=$(check_meta "$m" 2>&1) || { fail "$label: metadata: $seq"; return; }
    lineage ns.t > "$tmp/floe.out" 2>&1 || { fail "$label: floe scan: $(cat "$tmp/floe.out")"; return; }
    oracle "$m" > "$tmp/oracle.out" 2>&1 || { fail "$label: oracle: $(cat "$tmp/oracle.out")"; return; }
    cmp -s "$tmp/floe.out" "$tmp/oracle.out" ||
        fail "$label: floe scan and the oracle differ: $(diff "$tmp/floe.out" "$tmp/oracle.out" | head -5)"
    python3 - "$prev" "$tmp/floe.out" "$seq" "$label" <<'EOF' || fail "$label: lineage changed"
import sys
def load(p):
    return {l.split()[0]: l.split()[1:] for l in open(p) if l.strip()}
old, new, seq, label = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3], sys.argv[4]
bad = 0
for k, v in old.items():
    if new.get(k) != v:
        print('%s: row %s had %s, now %s' % (label, k, v, new.get(k))); bad += 1
ids = [v[0] for v in new.values()]
if 'None' in ids or len(set(ids)) != len(ids):
    print('%s: null or repeated _row_id' % label); bad += 1
for k, v in new.items():
    if k not in old and v[1] != seq:
        print('%s: new row %s has sequence number %s, the commit %s' % (label, k, v[1], seq)); bad += 1
sys.exit(1 if bad else 0)
EOF
    "$FLOE" scan ns.t | python3 -c "import json,sys; [print(json.dumps(json.loads(l), sort_keys=True)) for l in sys.stdin]" | sort > "$tmp/rows.floe"
    (cd "$js" && node icebird_read.mjs --metadata "$m") | python3 -c "import json,sys; [print(json.dumps(json.loads(l), sort_keys=True)) for l in sys.stdin]" | sort > "$tmp/rows.icebird" 2>&1 ||
        fail "$label: icebird: $(tail -2 "$tmp/rows.icebird")"
    cmp -s "$tmp/rows.floe" "$tmp/rows.icebird" || fail "$label: icebird reads other rows than floe scan"
    cp "$tmp/floe.out" "$prev"
    [ "$fails" != "$before" ] || echo "ok $label ($(wc -l < "$tmp/floe.out") rows, last sequence number $seq)"
}

# 1. a v3 table through the commit paths
"$FLOE" table create ns.t --schema schema.json --property format-version=3 > /dev/null
"$FLOE" table describe ns.t --json | grep -q '"format_version":3' || fail "create: not format v3"
"$FLOE" table properties ns.t | grep -q format-version && fail "create: format-version stored as a property"
rows a.ndjson 0 300
rows b.ndjson 300 350
rows c.ndjson 350 420
rows d.ndjson 420 425
"$FLOE" append ns.t a.ndjson > /dev/null
step "append"
"$FLOE" append ns.t b.ndjson > /dev/null
step "append 2"
"$FLOE" rewrite-manifests ns.t > /dev/null
step "rewrite-manifests"
"$FLOE" rewrite ns.t -o rewrite-all=true > /dev/null
step "rewrite"
"$FLOE" append ns.t c.ndjson > /dev/null
step "append 3"
"$FLOE" rewrite ns.t -o rewrite-all=true -o target-file-size-bytes=2000 > /dev/null
step "rewrite into several files"
# the rewritten files hold every lineage value: copied as stored
"$FLOE" rewrite ns.t -o rewrite-all=true > /dev/null
step "rewrite of rewritten files"
"$FLOE" ref create ns.t dev > /dev/null
pick=$("$FLOE" append ns.t d.ndjson --branch dev --json |
       python3 -c "import json,sys; print(json.load(sys.stdin)['snapshot_id'])")
rows e.ndjson 425 430
"$FLOE" append ns.t e.ndjson > /dev/null
step "append with a branch beside"
# not a fast-forward (main moved): the dev snapshot's files are appended to main anew
if "$FLOE" snapshots cherrypick ns.t "$pick" > "$tmp/out" 2>&1; then
    step "cherrypick"
else
    fail "cherrypick: $(cat "$tmp/out")"
fi

# 2. upgrades
"$FLOE" table create ns.u --schema schema.json > /dev/null
"$FLOE" append ns.u a.ndjson > /dev/null
"$FLOE" table upgrade ns.u --format-version 3 > "$tmp/out" 2>&1 || fail "upgrade v2 -> v3: $(cat "$tmp/out")"
grep -q 'upgraded ns.u from format v2 to v3' "$tmp/out" || fail "upgrade says: $(cat "$tmp/out")"
python3 -c "
import json,sys; m=json.load(open(sys.argv[1]))
assert m['format-version']==3 and m['next-row-id']==0, (m['format-version'], m.get('next-row-id'))" "$(md ns.u)" ||
    fail "upgrade: metadata"
n=$("$FLOE" scan ns.u --columns _row_id,_last_updated_sequence_number | grep -c '"_row_id":null,"_last_updated_sequence_number":null')
[ "$n" = 300 ] || fail "upgrade: $n of 300 rows read with null lineage before the next commit"
"$FLOE" table upgrade ns.u --format-version 3 --json | grep -q '"upgraded":false' || fail "a second upgrade is not a no-op"
"$FLOE" append ns.u b.ndjson > /dev/null
lineage ns.u > "$tmp/u.out"
oracle "$(md ns.u)" > "$tmp/u.oracle" || fail "upgrade: oracle: $(cat "$tmp/u.oracle")"
cmp -s "$tmp/u.out" "$tmp/u.oracle" || fail "upgrade: floe scan and the oracle differ"
python3 - "$tmp/u.out" <<'EOF' || fail "upgrade: the first commit after it did not give every row an id"
import sys
rows = [l.split() for l in open(sys.argv[1])]
ids = [r[1] for r in rows]
assert len(rows) == 350 and 'None' not in ids and len(set(ids)) == 350
EOF
[ "$fails" = 0 ] && echo "ok upgrade v2 -> v3"
cp -r "$conf/duckdb-iceberg/iceberg/lineitem_iceberg_gz" "$tmp/li"
(cd "$tmp" && "$FLOE" table register ns.li "$tmp/li/metadata/v2.gz.metadata.json" > /dev/null)
(cd "$tmp" && "$FLOE" table upgrade ns.li --format-version 3 > "$tmp/out" 2>&1) || fail "upgrade v1 -> v3: $(cat "$tmp/out")"
grep -q 'from format v1 to v3' "$tmp/out" || fail "upgrade v1 -> v3 says: $(cat "$tmp/out")"
(cd "$tmp" && "$FLOE" scan ns.li --columns _row_id --limit 2) | grep -c '"_row_id":null' | grep -q 2 ||
    fail "upgrade v1 -> v3: lineage not null"
(cd "$tmp" && "$FLOE" table upgrade ns.li --format-version 3) | grep -q 'already at format version 3' ||
    fail "upgrade of a v3 table to v3 is not a no-op"
rc=0; (cd "$tmp" && "$FLOE" table upgrade ns.li --format-version 2) > "$tmp/out" 2>&1 || rc=$?
[ $rc = 2 ] && grep -q 'format versions cannot go down' "$tmp/out" ||
    fail "upgrade of a v3 table to v2: exit $rc, $(cat "$tmp/out")"

# 3. the conformance v3 table
v3=$conf/duckdb-iceberg/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector
v3md=$v3/metadata/00002-legacy-bare-dv.metadata.json
got=$("$FLOE" scan "$v3md" --snapshot 8314182234503896325 --columns id,_row_id,_last_updated_sequence_number)
[ "$got" = '{"id":1,"_row_id":null,"_last_updated_sequence_number":null}
{"id":2,"_row_id":null,"_last_updated_sequence_number":null}
{"id":3,"_row_id":null,"_last_updated_sequence_number":null}' ] ||
    fail "conformance v3: the snapshot before the upgrade reads $got"
"$FLOE" scan "$v3md" --columns id,_row_id > "$tmp/out" 2>&1 &&
    fail "conformance v3: the bare DV was read"
grep -q 'legacy-bare-deletion-vector.puffin' "$tmp/out" || fail "conformance v3: error does not name the DV: $(cat "$tmp/out")"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "row_lineage: all ok"
