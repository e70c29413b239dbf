#!/usr/bin/env bash
# rewrite_generic_same.sh - the rewrite reader's shortcuts with deletes (rewrite_read.c:
# decoding into the batch the surviving rows are taken from, floe_batch_take_kept, the
# merged equality key set probed in two prefetched passes when the key is one integer
# column without nulls) give exactly the rows of the generic path
# (FLOE_REWRITE_READER=generic: row by row), row lineage included.
#
# Per table (v2 keyed by a long, v2 keyed by an int, v3 keyed by a long): data files
# whose key column has no null (the shortcuts) and one with nulls in it (the row-by-row
# test inside the same rewrite), three upserts through equality delete files (a null key
# and absent keys among them), and a `floe delete` (position deletes on v2, deletion
# vectors on v3) between them. The same snapshot is rewritten generic, rolled back, then
# rewritten with the shortcuts. Checked: the rows, with _row_id and
# _last_updated_sequence_number on v3, are identical (sorted) between the two rewrites
# and to `floe scan`'s merge-on-read of the snapshot before; records_deleted and
# eq_delete_rows_filtered are equal; no delete file applies after either rewrite.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
UPSERT=${FLOE_EQ_UPSERT:-$root/build/floe_eq_upsert}
[ -x "$UPSERT" ] || { echo "rewrite_generic_same: no floe_eq_upsert ($UPSERT), skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=gs
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_REWRITE_READER || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"long"},{"id":2,"name":"b","required":false,"type":"int"},{"id":3,"name":"s","required":false,"type":"string"},{"id":4,"name":"x","required":false,"type":"double"},{"id":5,"name":"n","required":false,"type":"long"}]}' > s.json

# gen.py KEY SEED: data files (base0-2 and late: no null key; mid: nulls in it) and the
# keys of three upserts, as tab-separated lines (\N: null)
cat > gen.py <<'PY'
import json, random, sys
key = sys.argv[1]
random.seed(int(sys.argv[2]))
n = [0]
def row(nulls):
    n[0] += 1
    r = random.random
    x = {'a': random.randrange(-3000, 3000) if r() > .02 else random.choice([-2**63, 2**63 - 1, 0]),
         'b': random.randrange(-2000, 2000) if r() > .02 else random.choice([-2**31, 2**31 - 1, 0]),
         's': None if r() < .1 else 's%d' % random.randrange(5000),
         'x': None if r() < .1 else random.randrange(4000) / 8,
         'n': n[0]}
    if nulls and r() < .08:
        x[key] = None
    return x
rows = []
def data(name, k, nulls):
    rs = [row(nulls) for _ in range(k)]
    rows.extend(rs)
    with open(name, 'w') as f:
        for x in rs:
            f.write(json.dumps(x) + '\n')
def upsert(name, k):
    ks = [x[key] for x in random.sample(rows, k)] + [None, 123456789]
    with open(name, 'w') as f:
        for v in ks:
            f.write(('\\N' if v is None else str(v)) + '\n')
for i in range(3):
    data('base%d.ndjson' % i, 3000, False)
upsert('up1.tsv', 400)
data('mid.ndjson', 1500, True)
upsert('up2.tsv', 400)
data('late.ndjson', 2000, False)
upsert('up3.tsv', 300)
PY

rows() { # rows TABLE [LINEAGE]: the live rows, sorted by n, as JSON lists
    local c=a,b,s,x,n
    [ -n "${2:-}" ] && c=$c,_row_id,_last_updated_sequence_number
    "$FLOE" scan "$1" --columns "$c" | python3 -c "
import json, sys
cols = sys.argv[1].split(',')
out = [[r.get(c) for c in cols] for r in map(json.loads, sys.stdin)]
for r in sorted(out, key=lambda r: r[4]):
    print(json.dumps(r))" "$c"; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], '-'))" "$1" "$2"; }
cur_snap() { "$FLOE" snapshots "$1" --json | python3 -c "
import json,sys; print([s for s in json.load(sys.stdin) if s.get('current')][0]['snapshot_id'])"; }
no_deletes() { "$FLOE" scan "$1" --plan --json | python3 -c "
import json,sys; p = json.load(sys.stdin); sys.exit(1 if any(f['deletes'] for f in p['files']) else 0)"; }

case_no=0
for spec in 2:a 2:b 3:a; do
    case_no=$((case_no + 1))
    v=${spec%%:*} key=${spec#*:} t=ns.t$case_no d=c$case_no lin=""
    [ "$v" = 3 ] && lin=1
    "$FLOE" table create "$t" --schema s.json --property format-version="$v" > /dev/null
    mkdir -p "$d" && (cd "$d" && python3 ../gen.py "$key" "$case_no")
    for i in 0 1 2; do "$FLOE" append "$t" "$d/base$i.ndjson" > /dev/null; done
    "$UPSERT" "$tmp/catalog.db" gs "$tmp/wh" "$t" "$key" "@@$d/up1.tsv" > /dev/null || fail "$spec: upsert 1"
    "$FLOE" delete "$t" --where "s LIKE 's1%'" > /dev/null || fail "$spec: delete"
    "$FLOE" append "$t" "$d/mid.ndjson" > /dev/null
    "$UPSERT" "$tmp/catalog.db" gs "$tmp/wh" "$t" "$key" "@@$d/up2.tsv" > /dev/null || fail "$spec: upsert 2"
    "$FLOE" append "$t" "$d/late.ndjson" > /dev/null
    "$UPSERT" "$tmp/catalog.db" gs "$tmp/wh" "$t" "$key" "@@$d/up3.tsv" > /dev/null || fail "$spec: upsert 3"
    rows "$t" "$lin" > "$d/before"
    before=$(cur_snap "$t")
    FLOE_REWRITE_READER=generic "$FLOE" rewrite "$t" --option rewrite-all=true --json > "$d/gen.json" ||
        { fail "$spec: generic rewrite failed"; echo '{}' > "$d/gen.json"; }
    rows "$t" "$lin" > "$d/generic"
    no_deletes "$t" || fail "$spec: delete files apply after the generic rewrite"
    "$FLOE" snapshots rollback "$t" --to "$before" > /dev/null
    "$FLOE" rewrite "$t" --option rewrite-all=true --json > "$d/fast.json" ||
        { fail "$spec: rewrite failed"; echo '{}' > "$d/fast.json"; }
    rows "$t" "$lin" > "$d/fast"
    no_deletes "$t" || fail "$spec: delete files apply after the rewrite"
    cmp -s "$d/fast" "$d/generic" ||
        fail "$spec: rows differ from the generic path's ($(wc -l < "$d/fast") and $(wc -l < "$d/generic") rows; $(diff "$d/fast" "$d/generic" | head -3 | tr '\n' ' '))"
    cmp -s "$d/fast" "$d/before" ||
        fail "$spec: rows differ from floe scan's before the rewrite ($(wc -l < "$d/fast") and $(wc -l < "$d/before") rows; $(diff "$d/fast" "$d/before" | head -3 | tr '\n' ' '))"
    for k in records_deleted eq_delete_rows_filtered records_written; do
        [ "$(field "$d/fast.json" $k)" = "$(field "$d/gen.json" $k)" ] ||
            fail "$spec: $k $(field "$d/fast.json" $k), generic $(field "$d/gen.json" $k)"
    done
    [ "$(field "$d/fast.json" eq_delete_rows_filtered)" -gt 0 ] 2>/dev/null ||
        fail "$spec: the filter answered for no row"
    echo "rewrite_generic_same: v$v key $key: $(wc -l < "$d/fast") rows, $(field "$d/fast.json" records_deleted) deleted"
done
if [ "$fails" -gt 0 ]; then
    echo "rewrite_generic_same: $fails failure(s)"
    exit 1
fi
echo "rewrite_generic_same: ok"
