#!/usr/bin/env bash
# rewrite_copy_crc.sh - floe rewrite's row-group copy (fast-copy) checks the page CRCs it
# copies. parquet-testing's rle-dict-uncompressed-corrupt-checksum.parquet has exact chunk
# statistics, so `floe append --copy` takes it without reading a page, and its dictionary
# page's CRC is wrong: a scan fails on it, a re-encoding rewrite fails on it, but
# fast-copy=true copied the row group, bad CRC and all, into a new file and committed.
# Now the copy is refused and the row group re-encoded, which fails the group: nothing is
# committed. A file whose CRCs hold (plain-dict-uncompressed-checksum.parquet) is still
# copied, and reads the same rows after.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
conf=${FLOE_CONFORMANCE:-$root/../shared/conformance}
data=$conf/parquet-testing/data
[ -f "$data/rle-dict-uncompressed-corrupt-checksum.parquet" ] || { echo "rewrite_copy_crc: no $data, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=cc
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
nsnap() { "$FLOE" snapshots "$1" --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"; }
for f in rle-dict-uncompressed-corrupt-checksum plain-dict-uncompressed-checksum; do
    t=ns.${f//-/_}
    "$FLOE" inspect "$data/$f.parquet" > insp.txt
    sed -n 's/^iceberg schema: //p' insp.txt > s.json
    "$FLOE" table create "$t" --schema s.json \
        --property write.parquet.compression-codec=uncompressed > /dev/null
    cp "$data/$f.parquet" "$tmp/a.parquet"
    "$FLOE" append "$t" "$tmp/a.parquet" --copy --skip-page-crc > /dev/null
    n0=$(nsnap "$t")
    rc=0
    FLOE_LOG=debug "$FLOE" rewrite "$t" --option rewrite-all=true --option fast-copy=true --json > rw.json 2> rw.err || rc=$?
    n1=$(nsnap "$t")
    if [ "$f" = rle-dict-uncompressed-corrupt-checksum ]; then
        [ "$rc" != 0 ] || fail "$f: rewrite exit 0 with a page whose CRC is wrong: $(cat rw.json)"
        [ "$n1" = "$n0" ] || fail "$f: rewrite committed a copy of a corrupt page"
        grep -q "re-encoded: .*checksum mismatch" rw.err || fail "$f: the copy was not refused for the checksum: $(tail -c 600 rw.err)"
    else
        [ "$rc" = 0 ] || fail "$f: rewrite failed: $(cat rw.err)"
        copied=$(python3 -c "import json; print(json.load(open('rw.json'))['fast_copied_row_groups'])")
        [ "$copied" -ge 1 ] || fail "$f: no row group copied ($copied)"
        [ "$("$FLOE" scan "$t" | wc -l)" = 1000 ] || fail "$f: $("$FLOE" scan "$t" | wc -l) rows after the rewrite, want 1000"
    fi
done
[ "$fails" = 0 ] || exit 1
echo "rewrite_copy_crc: ok"
