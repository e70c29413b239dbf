#!/usr/bin/env bash
# geo_inspect.sh - floe inspect shows the GEOMETRY / GEOGRAPHY logical types with their
# CRS and edge algorithm (LogicalTypes.md), and each chunk's GeospatialStatistics: the
# bounding box and the ISO WKB type codes, in text and in --json, equal to what hyparquet
# reads from the same footer. A CRS holding a control byte is printed made printable.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v python3 >/dev/null || { echo "geo_inspect: python3 needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "geo_inspect: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "geo_inspect: FAIL: $*" >&2; exit 1; }

cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"g","required":false,"type":"geometry(EPSG:3857)"},
 {"id":3,"name":"gg","required":false,"type":"geography(srid:4326, karney)"},
 {"id":4,"name":"gl","required":false,"type":"geography"},
 {"id":5,"name":"p","required":false,"type":"geometry"},
 {"id":6,"name":"odd","required":false,"type":"geometry(x:a\u001bb)"},
 {"id":7,"name":"n","required":false,"type":"geometry"}]}
JSON
python3 - "$tmp" <<'PY'
import base64, json, struct, sys
d = sys.argv[1]
b = lambda x: base64.b64encode(x).decode()
pt = lambda x, y: struct.pack('<BI2d', 1, 1, x, y)
line = lambda *c: struct.pack('<BII', 1, 2, len(c) // 2) + struct.pack('<%dd' % len(c), *c)
rows = [
    {"id": 1, "g": b(pt(1, -2)), "gg": b(pt(170, -45)), "gl": b(line(170, 10, -170, 20)),
     "p": b(struct.pack('<BI4d', 1, 3001, 1, 2, 3, 4)), "odd": b(pt(0, 0))},
    {"id": 2, "g": b(line(3, 4, -1.5, 0)), "gg": b(pt(-10, 5)), "gl": b(pt(0, 0)),
     "p": b(struct.pack('<BI4d', 1, 3001, -1, -2, -3, -4))},
]
with open(d + '/in.ndjson', 'w') as f:
    for r in rows:
        f.write(json.dumps(r) + '\n')
PY
"$floe" convert --schema "$tmp/s.json" "$tmp/in.ndjson" -o "$tmp/out" > /dev/null 2> "$tmp/err" ||
  die "convert: $(cat "$tmp/err")"
f=$(ls "$tmp"/out/*.parquet)
"$floe" inspect "$f" > "$tmp/i.txt" || die "inspect"
want() { grep -qF -- "$1" "$tmp/i.txt" || fail "inspect lacks '$1': $(cat "$tmp/i.txt")"; }
want 'BYTE_ARRAY GEOMETRY(crs=EPSG:3857) g = 2'
want 'BYTE_ARRAY GEOGRAPHY(crs=srid:4326, algorithm=KARNEY) gg = 3'
want 'BYTE_ARRAY GEOGRAPHY gl = 4'
want 'BYTE_ARRAY GEOMETRY p = 5'
want 'BYTE_ARRAY GEOMETRY(crs=x:a?b) odd = 6'
want ', bbox x [-1.5, 3] y [-2, 4], geo types [1, 2]'
want ', bbox x [-10, 170] y [-45, 5], geo types [1]'
want ', bbox x [-1, 1] y [-2, 2] z [-3, 3] m [-4, 4], geo types [3001]'
grep '^  gl: ' "$tmp/i.txt" | grep -q ', geo types \[1, 2\]' || fail "gl: $(grep '^  gl: ' "$tmp/i.txt")"
grep '^  gl: ' "$tmp/i.txt" | grep -q 'bbox' && fail "gl (geography with an edge) shows a box"
grep '^  n: ' "$tmp/i.txt" | grep -q 'geo types' && fail "n (all null) shows statistics"
LC_ALL=C grep -q $'\x1b' "$tmp/i.txt" && fail "inspect printed the CRS's escape byte"
"$floe" inspect --json "$f" > "$tmp/i.json" || die "inspect --json"
python3 - "$tmp/i.json" > "$tmp/floe.stats" <<'PY' || fail "inspect --json: $(cat "$tmp/i.json")"
import json, sys
d = json.load(open(sys.argv[1]))
for g, rg in enumerate(d["row_groups"]):
    for c in rg["columns"]:
        s = c.get("geospatial_statistics")
        if s is None:
            continue
        b = s.get("bbox")
        f = lambda v: repr(v).removesuffix('.0')
        t = "bbox=none" if b is None else "bbox=" + ",".join(f(b[k]) for k in ("xmin", "xmax", "ymin", "ymax"))
        if b and "zmin" in b: t += " z=%s,%s" % (f(b["zmin"]), f(b["zmax"]))
        if b and "mmin" in b: t += " m=%s,%s" % (f(b["mmin"]), f(b["mmax"]))
        print(g, c["path"], t, "types=" + ",".join(str(x) for x in sorted(s.get("geospatial_types", []))))
PY
if command -v node > /dev/null && [ -d "$js/node_modules/hyparquet" ]; then
  (cd "$js" && node geo_oracle.mjs stats "$f") | grep '^hyparquet ' | grep -v ' none$' |
    cut -d' ' -f2- > "$tmp/hyp.stats" || fail "the oracle cannot read $f"
  diff "$tmp/hyp.stats" "$tmp/floe.stats" || fail "inspect --json and hyparquet differ"
  [ "$(wc -l < "$tmp/floe.stats")" = 5 ] || fail "5 chunks with statistics: $(cat "$tmp/floe.stats")"
fi
[ "$fails" = 0 ] || die "$fails checks failed"
echo "geo_inspect: ok"
