#!/usr/bin/env python3
"""bench/shapes/gen.py - deterministic NDJSON for bench/convert's extra event shapes.

    gen.py SHAPE BYTES OUT       SHAPE: iot | wide | nested; BYTES e.g. 200M, 2G, 500000

Writes whole lines until at least BYTES are written; the same SHAPE and BYTES always give
the same file (seeded random.Random). The schema of each shape is bench/shapes/SHAPE.schema.json.
  iot     numeric-heavy telemetry: 26 fields, 19 doubles/longs/ints, 2 short strings
  wide    124 flat nullable fields (long, double, string, boolean), each row sets ~20%
  nested  lists of structs (with a map and a list inside), maps, structs 3 deep
"""
import random
import sys

def size(s):
    mult = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)

def ts(us):
    # microseconds since 2026-01-01T00:00:00Z -> ISO text (days within one year, no calendar)
    sec, frac = divmod(us, 1000000)
    day, r = divmod(sec, 86400)
    mon, d = divmod(day, 28)
    return '2026-%02d-%02dT%02d:%02d:%02d.%06dZ' % (mon % 12 + 1, d + 1, r // 3600,
                                                     r // 60 % 60, r % 60, frac)

FIRMWARE = ['1.4.2', '1.4.3', '1.5.0', '2.0.0-rc1', '2.0.1']
STATUS = ['ok', 'ok', 'ok', 'ok', 'degraded', 'fault']

def iot(rng, i):
    dev = rng.randrange(20000)
    r = rng.random
    return ('{"device_id":%d,"ts":"%s","seq":%d,"temp_c":%.3f,"humidity":%.2f,"pressure_hpa":%.2f,'
            '"voltage":%.4f,"current_a":%.4f,"power_w":%.3f,"lat":%.6f,"lon":%.6f,"alt_m":%.2f,'
            '"accel_x":%.5f,"accel_y":%.5f,"accel_z":%.5f,"gyro_x":%.5f,"gyro_y":%.5f,"gyro_z":%.5f,'
            '"rssi":%d,"battery_pct":%d,"error_count":%d,"uptime_s":%d,"bytes_tx":%d,"bytes_rx":%d,'
            '"firmware":"%s","status":"%s"}\n') % (
        dev, ts(i * 2000 + rng.randrange(2000)), i, 20 + 15 * r(), 100 * r(), 950 + 100 * r(),
        3.0 + r(), 2 * r(), 50 * r(), 40 + r(), -74 + r(), 500 * r(),
        r() - 0.5, r() - 0.5, 9.8 + r() * 0.1, r() - 0.5, r() - 0.5, r() - 0.5,
        -100 + rng.randrange(70), rng.randrange(101), rng.randrange(5) if r() < 0.1 else 0,
        i // 7 + dev, rng.randrange(1 << 24), rng.randrange(1 << 30),
        FIRMWARE[dev % 5], STATUS[rng.randrange(6)])

WIDE_N = 124
WIDE_KIND = ['long', 'double', 'string', 'boolean']
WORDS = ('alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi '
         'rho sigma tau upsilon phi chi psi omega').split()

def wide_name(k):
    return 'f%03d_%s' % (k, WIDE_KIND[k % 4])

def wide(rng, i):
    parts = ['"id":%d' % i]
    r = rng.random
    for k in range(WIDE_N):
        # fields are present with 5-40% probability each (fixed per field), so columns differ
        if r() >= 0.05 + 0.35 * ((k * 37) % 100) / 100:
            continue
        kind = k % 4
        if kind == 0:
            v = '%d' % rng.randrange(-1 << 40, 1 << 40)
        elif kind == 1:
            v = '%.6g' % ((r() - 0.5) * 1e4)
        elif kind == 2:
            v = '"%s-%d"' % (WORDS[rng.randrange(24)], rng.randrange(1000))
        else:
            v = 'true' if r() < 0.5 else 'false'
        parts.append('"%s":%s' % (wide_name(k), v))
    return '{' + ','.join(parts) + '}\n'

def nested(rng, i):
    r = rng.random
    w = lambda: WORDS[rng.randrange(24)]
    tags = ','.join('"%s"' % w() for _ in range(rng.randrange(5)))
    items = []
    for _ in range(rng.randrange(1, 6)):
        attrs = ','.join('"%s":"%s"' % (k, w()) for k in
                         sorted(rng.sample(['color', 'size', 'brand', 'fit', 'gift'], rng.randrange(4))))
        items.append('{"sku":"SKU-%06d","qty":%d,"price":%.2f,"attrs":{%s}}'
                     % (rng.randrange(10 ** 6), 1 + rng.randrange(9), 100 * r(), attrs))
    metrics = ','.join('"%s":%.4f' % (k, 1000 * r()) for k in
                       sorted(rng.sample(['cpu', 'mem', 'disk', 'net', 'gpu', 'io', 'lat'], rng.randrange(1, 6))))
    sessions = []
    for _ in range(rng.randrange(3)):
        evs = ','.join('{"kind":"%s","ms":%d}' % (w(), rng.randrange(100000)) for _ in range(rng.randrange(1, 5)))
        sessions.append('{"start":%d,"events":[%s]}' % (1700000000000 + rng.randrange(10 ** 9), evs))
    geo = '{"lat":%.6f,"lon":%.6f}' % (90 * r(), 180 * r()) if r() < 0.8 else 'null'
    return ('{"id":%d,"ts":"%s","user":{"name":"%s %s","tags":[%s],"address":{"city":"%s","zip":"%05d","geo":%s}},'
            '"items":[%s],"metrics":{%s},"sessions":[%s]}\n') % (
        i, ts(i * 5000), w(), w(), tags, w(), rng.randrange(100000), geo,
        ','.join(items), metrics, ','.join(sessions))

def main():
    shape, want, out = sys.argv[1], size(sys.argv[2]), sys.argv[3]
    fn = {'iot': iot, 'wide': wide, 'nested': nested}[shape]
    rng = random.Random(0x5EED ^ len(shape))
    n = 0
    i = 0
    with open(out, 'w') as f:
        while n < want:
            chunk = [fn(rng, i + k) for k in range(1000)]
            i += 1000
            s = ''.join(chunk)
            f.write(s)
            n += len(s)

if __name__ == '__main__':
    main()
