#!/usr/bin/env bash
# append_page_crc.sh - floe append of a Parquet file checks the page CRCs the file
# carries. The append read only the footer when the chunk statistics were exact, so a file
# whose pages fail their CRC (every later read of it fails) was committed:
# parquet-testing's rle-dict-uncompressed-corrupt-checksum.parquet (its dictionary page)
# and a floe-written file with one byte of a data page's body flipped (both committed
# before; datapage_v1-corrupt-checksum.parquet was refused already, its inexact statistics
# having its values read). Now each is refused, naming the file, the column and the page's
# offset, and nothing is committed (no snapshot; with --copy no copy left in the data
# folder). The same files with their CRCs intact are added, and --skip-page-crc adds a
# corrupt one as before (for tests of the read side).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
conf=${FLOE_CONFORMANCE:-$root/../shared/conformance}
data=$conf/parquet-testing/data
[ -f "$data/datapage_v1-corrupt-checksum.parquet" ] || { echo "append_page_crc: no $data, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=pc
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
cd "$tmp"
"$FLOE" namespace create ns > /dev/null
nsnap() { "$FLOE" snapshots "$1" --json | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"; }
ndata() { find "$tmp/wh/ns/$1/data" -name '*.parquet' 2> /dev/null | wc -l; }
n=0
# table_for FILE: a new table with FILE's schema; its name in $t
table_for() {
    n=$((n + 1))
    t=ns.t$n
    "$FLOE" inspect "$1" > insp.txt
    sed -n 's/^iceberg schema: //p' insp.txt > s.json
    "$FLOE" table create "$t" --schema s.json > /dev/null
}
# refused FILE [skip]: append (as is and --copy) fails naming the file and a page
# offset; with skip, --skip-page-crc adds it (a file whose statistics spare its values)
refused() {
    local f=$1 skip=${2:-} base
    base=$(basename "$f")
    table_for "$f"
    for copy in "" --copy; do
        cp "$f" "$tmp/in-$n.parquet"
        rc=0
        "$FLOE" append "$t" "$tmp/in-$n.parquet" $copy > out.txt 2> err.txt || rc=$?
        [ "$rc" != 0 ] || fail "$base ${copy:-(in place)}: appended with a page whose CRC does not hold"
        grep -q "in-$n.parquet: row group [0-9]*: column .*: page at offset [0-9]*: checksum mismatch" err.txt ||
            fail "$base ${copy:-(in place)}: the error does not name the file, column and page offset: $(cat err.txt)"
        [ "$(nsnap "$t")" = 0 ] || fail "$base ${copy:-(in place)}: a snapshot was committed"
        [ "$(ndata "${t#ns.}")" = 0 ] || fail "$base ${copy:-(in place)}: files left in the data folder"
    done
    [ -n "$skip" ] || return 0
    # the read side's tests place such files with --skip-page-crc
    "$FLOE" append "$t" "$tmp/in-$n.parquet" --copy --skip-page-crc > /dev/null 2> err.txt ||
        fail "$base: --skip-page-crc: $(cat err.txt)"
    [ "$(nsnap "$t")" = 1 ] || fail "$base: --skip-page-crc committed nothing"
}
accepted() {
    local f=$1
    table_for "$f"
    cp "$f" "$tmp/in-$n.parquet"
    "$FLOE" append "$t" "$tmp/in-$n.parquet" --copy > /dev/null 2> err.txt ||
        fail "$(basename "$f"): refused: $(cat err.txt)"
    [ "$(nsnap "$t")" = 1 ] || fail "$(basename "$f"): not committed"
}
refused "$data/datapage_v1-corrupt-checksum.parquet"
refused "$data/rle-dict-uncompressed-corrupt-checksum.parquet" skip
accepted "$data/datapage_v1-uncompressed-checksum.parquet"
accepted "$data/datapage_v1-snappy-compressed-checksum.parquet"
accepted "$data/plain-dict-uncompressed-checksum.parquet"

# floe's own file (its pages carry CRCs), a byte of a page body flipped: the marker value
# (neither the minimum nor the maximum: not in the statistics) is stored once,
# uncompressed, in a data page
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"s","required":false,"type":"string"}]}' > own.json
python3 -c "
import json
for i in range(2000):
    print(json.dumps({'id': i, 's': 'mMARKER-UNIQUE-VALUE' if i == 777 else 'a%d' % i if i else 'zzz'}))
" > own.ndjson
"$FLOE" table create ns.own --schema own.json --property write.parquet.compression-codec=uncompressed > /dev/null
"$FLOE" append ns.own own.ndjson > /dev/null
src=$(find "$tmp/wh/ns/own/data" -name '*.parquet' | head -1)
cp "$src" good.parquet
python3 - good.parquet bad.parquet <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"MARKER-UNIQUE-VALUE")
assert i > 0 and b.find(b"MARKER-UNIQUE-VALUE", i + 1) < 0, "the marker must be stored once"
b[i + 3] ^= 0x20
open(sys.argv[2], "wb").write(b)
PY
"$FLOE" inspect good.parquet > /dev/null
"$FLOE" table create ns.own2 --schema own.json > /dev/null
rc=0
"$FLOE" append ns.own2 "$tmp/bad.parquet" --copy > out.txt 2> err.txt || rc=$?
[ "$rc" != 0 ] || fail "floe's file with a flipped byte: appended"
grep -q "bad.parquet: row group 0: column s: page at offset [0-9]*: checksum mismatch" err.txt ||
    fail "floe's file with a flipped byte: $(cat err.txt)"
[ "$(nsnap ns.own2)" = 0 ] || fail "floe's file with a flipped byte: committed"
"$FLOE" append ns.own2 "$tmp/good.parquet" --copy > /dev/null 2> err.txt || fail "floe's own file: $(cat err.txt)"
[ "$("$FLOE" scan ns.own2 | wc -l)" = 2000 ] || fail "floe's own file: rows differ"
[ "$fails" = 0 ] || exit 1
echo "append_page_crc: ok"
