#!/usr/bin/env python3
"""avro_header.py FILE... - print each Avro object container file's header metadata as one
JSON object per line ({"file": FILE, "meta": {key: value}}), values decoded as UTF-8.
Reads the header only (magic, metadata map); no Avro library needed."""
import json
import sys


def header(path):
    b = open(path, "rb").read()
    if b[:4] != b"Obj\x01":
        raise SystemExit(f"{path}: not an Avro object container file")
    p = 4

    def zigzag():
        nonlocal p
        shift = x = 0
        while True:
            c = b[p]
            p += 1
            x |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return (x >> 1) ^ -(x & 1)

    meta = {}
    while True:
        n = zigzag()
        if n == 0:
            return meta
        if n < 0:
            n = -n
            zigzag()  # block size in bytes
        for _ in range(n):
            k = zigzag()
            key = b[p:p + k].decode()
            p += k
            v = zigzag()
            meta[key] = b[p:p + v].decode(errors="replace")
            p += v


for f in sys.argv[1:]:
    print(json.dumps({"file": f, "meta": header(f)}))
