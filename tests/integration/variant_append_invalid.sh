#!/usr/bin/env bash
# variant_append_invalid.sh - `floe append` of a Parquet file whose UNSHREDDED variant
# column holds bytes that break VariantEncoding.md is refused naming the file and the
# column, and nothing is committed (adversary adv23e D6: such files were taken unread, and
# every later `floe scan` of the table failed, `floe rewrite` copied the bad bytes on).
# The files are floe's own output with variant bytes patched and the pages' CRC-32 put
# right, so only the variant is wrong: `floe cat` refuses each with a variant error.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "variant_append_invalid: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"payload","required":false,"type":"variant"}]}' > "$tmp/s.json"
echo '{"id":1,"payload":{"ab":1,"ac":2}}' > "$tmp/in.ndjson"
"$floe" convert -s "$tmp/s.json" -c none -o "$tmp/o" "$tmp/in.ndjson" > /dev/null || fail convert
good=$tmp/o/part-00000.parquet
# patch GOOD OUT OLDHEX NEWHEX: the bytes replaced, then each page's stored CRC-32 (a
# zigzag varint in its header) replaced by the one floe cat computes
patch() {
  python3 - "$floe" "$good" "$2" "$3" "$4" <<'PY' || fail "patch $2"
import re, struct, subprocess, sys
floe, src, dst, old, new = sys.argv[1:6]
d = open(src, "rb").read()
assert d.count(bytes.fromhex(old)) >= 1, "pattern not in the file"
d = d.replace(bytes.fromhex(old), bytes.fromhex(new))
def zz(u):
    s = struct.unpack("<i", struct.pack("<I", u))[0]
    z, out = ((s << 1) ^ (s >> 31)) & 0xFFFFFFFF, b""
    while True:
        b, z = z & 0x7F, z >> 7
        if not z:
            return out + bytes([b])
        out += bytes([b | 0x80])
for _ in range(8):
    open(dst, "wb").write(d)
    err = subprocess.run([floe, "cat", dst], capture_output=True, text=True).stderr
    m = re.search(r"CRC-32 stored ([0-9a-f]+), computed ([0-9a-f]+)", err)
    if not m:
        sys.exit(0)
    o, n = zz(int(m.group(1), 16)), zz(int(m.group(2), 16))
    assert len(o) == len(n) and d.count(o) == 1, "CRC bytes not unique"
    d = d.replace(o, n)
sys.exit("CRCs not settled")
PY
}
# metadata: version 1, sorted, 2 keys "ab" "ac"; the value: an object of fields 0, 1
patch dup "$tmp/dup.parquet" 110200020461626163 010200020461626162   # "ab" twice
patch sorted "$tmp/sorted.parquet" 110200020461626163 110200020461636162 # flagged sorted, not
patch order "$tmp/order.parquet" 110200020461626163 010200020461636162  # fields out of order
"$floe" cat "$good" > /dev/null || fail "the unpatched file"
for f in dup sorted order; do
  ! "$floe" cat "$tmp/$f.parquet" > /dev/null 2> "$tmp/err" || fail "floe cat read $f"
  grep -q 'variant' "$tmp/err" && ! grep -q 'CRC' "$tmp/err" || fail "$f: not a variant error: $(cat "$tmp/err")"
done
"$floe" namespace create t > /dev/null
"$floe" table create t.v --schema "$tmp/s.json" --property format-version=3 > /dev/null
for f in dup sorted order; do
  for how in "" --copy; do
    ! "$floe" append t.v "$tmp/$f.parquet" $how > "$tmp/out" 2> "$tmp/err" ||
      fail "append $how took $f: $(cat "$tmp/out")"
    grep -q "$tmp/$f.parquet: row group 0: column payload.[a-z]*: variant" "$tmp/err" ||
      fail "append $how $f: error $(cat "$tmp/err")"
  done
done
[ -z "$("$floe" scan t.v)" ] || fail "a refused file was committed"
"$floe" append t.v "$good" > /dev/null || fail "append of the unpatched file"
[ "$("$floe" scan t.v)" = '{"id":1,"payload":{"ab":1,"ac":2}}' ] || fail "scan: $("$floe" scan t.v)"
echo "variant_append_invalid: ok"
