#!/usr/bin/env bash
# convert_wide_memory.sh - a wide schema's columns cost memory by what they hold, not a
# fixed amount each: 2,000 optional columns, a few hundred sparse records, converted with
# --row-group-size 4MB, stay within the 1.5 x row group + 64 MiB bound (README). Each
# column took ~180 KiB before its first value (a page index table of 1,024 entries, a
# 64 KiB first chunk segment, a 1,024-slot dictionary table), all of it resident because
# convert's malloc heap is in huge pages: 2,000 columns peaked at ~360 MiB.
# Skipped (exit 77) in sanitized builds (their allocator is not glibc's) and without
# /usr/bin/time or python3.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "convert_wide_memory: FAIL: $*" >&2; exit 1; }
command -v python3 > /dev/null || { echo "convert_wide_memory: no python3: skipped"; exit 77; }
[ -x /usr/bin/time ] || { echo "convert_wide_memory: no /usr/bin/time: skipped"; exit 77; }
libs=$(ldd "$floe" 2>/dev/null || true)
case $libs in
  *libasan.so* | *libubsan.so* | *libtsan.so*)
    echo "convert_wide_memory: sanitized build (its allocator is not glibc's): skipped"
    exit 77 ;;
esac

python3 - "$tmp" <<'PY'
import json, random, sys
d = sys.argv[1]
n = 2000
types = ['long', 'string', 'double', 'int', 'boolean', 'date']
fields = [{"id": 1, "name": "rid", "required": True, "type": "long"}]
for i in range(n):
    fields.append({"id": i + 2, "name": "c%d" % i, "required": False, "type": types[i % len(types)]})
json.dump({"type": "struct", "schema-id": 0, "fields": fields}, open(d + "/s.json", "w"))
val = {'long': '-7', 'string': '"x"', 'double': '0.5', 'int': '3', 'boolean': 'true',
       'date': '"2026-12-08"'}
r = random.Random(1)
with open(d + "/in.ndjson", "w") as f:
    for rid in range(400):
        cols = r.sample(range(n), 8)
        f.write('{"rid":%d,%s}\n' % (rid, ','.join('"c%d":%s' % (c, val[types[c % 6]]) for c in cols)))
PY
/usr/bin/time -f '%M' -o "$tmp/rss" "$floe" convert --schema "$tmp/s.json" --threads 1 \
  --row-group-size 4MB "$tmp/in.ndjson" -o "$tmp/out" > "$tmp/log" 2>&1 ||
  fail "convert failed: $(cat "$tmp/log")"
rows=$("$floe" cat "$tmp/out/part-00000.parquet" --columns rid --format csv | tail -n +2 | wc -l)
[ "$rows" -eq 400 ] || fail "$rows rows read back, want 400"
kib=$(tail -n 1 "$tmp/rss")
bound=$(( (4 * 1024 * 3 / 2) + 64 * 1024 ))
echo "convert_wide_memory: 2,000 columns, 400 records: peak RSS $kib KiB (bound $bound KiB)"
[ "$kib" -le "$bound" ] || fail "peak RSS $kib KiB over the 1.5 x 4 MiB + 64 MiB bound ($bound KiB)"
echo "convert_wide_memory: ok"
