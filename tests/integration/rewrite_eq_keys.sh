#!/usr/bin/env bash
# rewrite_eq_keys.sh - `floe rewrite` applies an upsert stream's equality deletes through
# the merged key set's filter (rewrite_read.c: bloom_hash; a row of one integer column is
# tested by value, without its key bytes) and deletes exactly the rows a python replay
# of the deletes says, for keys of every kind the filter hashes differently:
#   - one long column: the extremes (-2^63, 2^63-1), -1, 0, 1, values present and absent,
#     and a null key (deletes the rows whose key is null, not the others);
#   - one int column (widened to 8 bytes in the key): -2^31, 2^31-1, -1, 0, null;
#   - one date column (an int in the file);
#   - one double column (9 key bytes like a long's, built the general way);
#   - one string column: "", a string of 8 bytes (key of 13 bytes), a long one, null;
#   - two columns (long, string), with a null in either;
# each a table of its own (the merged set is used when every equality delete file that
# applies has the same columns): several data files, three upsert commits on the column
# (the keys of the later ones in the rows of the earlier upserts too: a key's rows
# newer than a delete stay), and a data file appended between them. Checked per table:
# the rewritten rows (floe scan) are the replay's; no delete file applies after; the
# filter answered for rows (eq_delete_rows_filtered > 0: the filtered path ran) and not
# for the rows deleted (records_deleted = the replay's count).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
UPSERT=${FLOE_EQ_UPSERT:-$root/build/floe_eq_upsert}
[ -x "$UPSERT" ] || { echo "rewrite_eq_keys: no floe_eq_upsert ($UPSERT), skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=ek
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"long"},{"id":2,"name":"b","required":false,"type":"int"},{"id":3,"name":"s","required":false,"type":"string"},{"id":4,"name":"x","required":false,"type":"double"},{"id":5,"name":"dt","required":false,"type":"date"},{"id":6,"name":"n","required":false,"type":"long"}]}' > s.json

# gen.py: the rows of each commit and the keys of each upsert, as files, and the log
# the replay reads. A row: a, b, s, x, dt (days), n (unique). Values are drawn so that
# every key kind has duplicates, nulls and extremes.
cat > gen.py <<'PY'
import datetime, json, random, sys
random.seed(int(sys.argv[2]))
cols = sys.argv[1].split(',')
L = [-2**63, 2**63 - 1, -1, 0, 1, 7, 1 << 40, -(1 << 40)]
I = [-2**31, 2**31 - 1, -1, 0, 1, 3, 100000]
S = ['', 'abcdefgh', 'k', 'x' * 300, 'abcdefgi', 'é∂']
X = [0.5, -1.25, 1e300, 3.0, 2.0 ** 70]
D = [0, -1, 19000, 20000, -719162]
n = [0]
def row():
    n[0] += 1
    r = random.random
    return {'a': None if r() < .05 else random.choice(L) if r() < .3 else random.randrange(-5000, 5000),
            'b': None if r() < .05 else random.choice(I) if r() < .3 else random.randrange(-3000, 3000),
            's': None if r() < .05 else random.choice(S) if r() < .3 else 's%d' % random.randrange(4000),
            'x': None if r() < .05 else random.choice(X) if r() < .3 else random.randrange(2000) / 4,
            'dt': None if r() < .05 else random.choice(D) if r() < .3 else random.randrange(18000, 21000),
            'n': n[0]}
def text(c, v):
    if v is None:
        return '\\N'
    if c == 'x':
        return repr(float(v))
    return str(v)
def iso(days):
    return None if days is None else str(datetime.date(1970, 1, 1) + datetime.timedelta(days=days))
log = []
def data(name, k):
    rows = [row() for _ in range(k)]
    with open(name, 'w') as f:
        for x in rows:
            f.write(json.dumps({c: (iso(x[c]) if c == 'dt' else x[c]) for c in x}) + '\n')
    log.append(['data', rows])
    return rows
def keys_from(rows, k):
    ks = [tuple(x[c] for c in cols) for x in random.sample(rows, k)]
    ks += [tuple(None for c in cols)]                      # a null key (all columns)
    if len(cols) > 1:
        x = random.choice(rows); ks.append((x[cols[0]], None))  # a null in one column
        x = random.choice(rows); ks.append((None, x[cols[1]]))
    ks += [tuple({'a': 123456789, 'b': 1234567, 's': 'absent', 'x': 9.75, 'dt': 55555}[c]
                 for c in cols)]                           # absent from the data
    return ks
def upsert(name, ks):
    with open(name, 'w') as f:
        for k in ks:
            f.write('\t'.join(text(c, v) for c, v in zip(cols, k)) + '\n')
    log.append(['eq', [list(k) for k in ks]])
base = []
for i in range(3):
    base += data('base%d.ndjson' % i, 1500)
upsert('up1.tsv', keys_from(base, 300) + [tuple({'a': v, 'b': I[j % len(I)], 's': S[j % len(S)], 'x': X[j % len(X)], 'dt': D[j % len(D)]}[c] for c in cols) for j, v in enumerate(L)])
mid = data('mid.ndjson', 800)
upsert('up2.tsv', keys_from(base + mid, 300))
upsert('up3.tsv', keys_from(base + mid, 200))
json.dump(log, open('log.json', 'w'))
PY

# replay.py: the live rows after the log (a row is deleted by an equality delete
# committed after it whose key equals its columns, null equal to null), sorted by n
cat > replay.py <<'PY'
import json, sys
cols = sys.argv[1].split(',')
log = json.load(open('log.json'))
live = []
for i, (kind, what) in enumerate(log):
    if kind == 'data':
        live += [(i, r) for r in what]
deleted = 0
out = []
for i, r in live:
    key = [r[c] for c in cols]
    if any(kind == 'eq' and j > i and key in what for j, (kind, what) in enumerate(log)):
        deleted += 1
        continue
    out.append(r)
for r in sorted(out, key=lambda r: r['n']):
    print(json.dumps([r[c] for c in ('a', 'b', 's', 'x', 'dt', 'n')]))
print(deleted, file=open('deleted', 'w'))
PY

# scan rows as the replay prints them (dates as days, doubles as floats)
rows() { "$FLOE" scan "$1" | python3 -c "
import json, sys, datetime
out = []
for l in sys.stdin:
    r = json.loads(l)
    dt = r.get('dt')
    if isinstance(dt, str):
        dt = (datetime.date.fromisoformat(dt) - datetime.date(1970, 1, 1)).days
    x = r.get('x')
    out.append([r.get('a'), r.get('b'), r.get('s'), None if x is None else float(x), dt, r['n']])
for r in sorted(out, key=lambda r: r[5]):
    print(json.dumps(r))"; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

case_no=0
for cols in a b dt x s a,s; do
    case_no=$((case_no + 1))
    t=ns.t$case_no
    "$FLOE" table create "$t" --schema s.json --property format-version=2 > /dev/null
    mkdir -p "c$case_no" && (cd "c$case_no" && python3 ../gen.py "$cols" "$case_no")
    d=c$case_no
    for i in 0 1 2; do "$FLOE" append "$t" "$d/base$i.ndjson" > /dev/null; done
    "$UPSERT" "$tmp/catalog.db" ek "$tmp/wh" "$t" "$cols" "@@$d/up1.tsv" > /dev/null || fail "$cols: upsert 1"
    "$FLOE" append "$t" "$d/mid.ndjson" > /dev/null
    "$UPSERT" "$tmp/catalog.db" ek "$tmp/wh" "$t" "$cols" "@@$d/up2.tsv" > /dev/null || fail "$cols: upsert 2"
    "$UPSERT" "$tmp/catalog.db" ek "$tmp/wh" "$t" "$cols" "@@$d/up3.tsv" > /dev/null || fail "$cols: upsert 3"
    (cd "$d" && python3 ../replay.py "$cols" > expected)
    rows "$t" > "$d/before"
    cmp -s "$d/before" "$d/expected" || fail "$cols: floe scan before the rewrite differs from the replay"
    "$FLOE" rewrite "$t" --option rewrite-all=true --json > "$d/rw.json" 2> "$d/rw.err" ||
        { fail "$cols: rewrite failed: $(tail -2 "$d/rw.err")"; echo '{}' > "$d/rw.json"; }
    rows "$t" > "$d/after"
    cmp -s "$d/after" "$d/expected" ||
        fail "$cols: rewritten rows differ from the replay ($(wc -l < "$d/after") rows, $(wc -l < "$d/expected") expected; $(diff "$d/after" "$d/expected" | head -3 | tr '\n' ' '))"
    [ -n "$("$FLOE" scan "$t" --plan --json | python3 -c "
import json,sys; p = json.load(sys.stdin); print('x' if any(f['deletes'] for f in p['files']) else '')")" ] &&
        fail "$cols: delete files still apply after the rewrite"
    got=$(field "$d/rw.json" records_deleted 2>/dev/null || echo -)
    [ "$got" = "$(cat "$d/deleted")" ] || fail "$cols: records_deleted $got, the replay deletes $(cat "$d/deleted")"
    filt=$(field "$d/rw.json" eq_delete_rows_filtered 2>/dev/null || echo 0)
    [ "$filt" -gt 0 ] || fail "$cols: the filter answered for no row (eq_delete_rows_filtered $filt)"
    echo "rewrite_eq_keys: $cols: $(wc -l < "$d/after") rows kept, $got deleted, $filt cleared by the filter"
done
if [ "$fails" -gt 0 ]; then
    echo "rewrite_eq_keys: $fails failure(s)"
    exit 1
fi
echo "rewrite_eq_keys: ok"
