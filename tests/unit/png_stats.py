#!/usr/bin/env python3
"""png_stats.py FILE - print "WIDTH HEIGHT COLOURS" of an 8-bit RGB/RGBA PNG (all filters
undone), so tests can tell a rendered page from a blank one without image libraries."""
import struct
import sys
import zlib


def main(path):
    d = open(path, 'rb').read()
    if d[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('not a PNG')
    p, idat = 8, b''
    w = h = bd = ct = 0
    while p < len(d):
        n, t = struct.unpack('>I4s', d[p:p + 8])
        c = d[p + 8:p + 8 + n]
        p += 12 + n
        if t == b'IHDR':
            w, h, bd, ct = struct.unpack('>IIBB', c[:10])
        elif t == b'IDAT':
            idat += c
    if bd != 8 or ct not in (2, 6):
        sys.exit('unsupported PNG: bit depth %d colour type %d' % (bd, ct))
    bpp = 4 if ct == 6 else 3
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = set()
    pos = 0
    for _ in range(h):
        f = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        for x in range(0, stride, bpp * 3):
            colours.add(bytes(line[x:x + 3]))
        prev = line
    print(w, h, len(colours))


if __name__ == '__main__':
    main(sys.argv[1])
