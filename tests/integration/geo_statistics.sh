#!/usr/bin/env bash
# geo_statistics.sh - Parquet GeospatialStatistics (parquet.thrift ColumnMetaData 17:
# bbox and geospatial_types) in the column chunks floe writes for GEOMETRY / GEOGRAPHY
# columns, and the geography manifest bounds the spec allows.
#
#  1. floe convert, several row groups: for every GEOMETRY/GEOGRAPHY chunk, the footer's
#     statistics as hyparquet and DuckDB (parquet_metadata) read them equal what the
#     chunk's values call for (tests/js/geo_oracle.mjs stats: box and ISO type codes from
#     an independent WKB reader). Geometry: the box of all points, Z and M when present.
#     Geography: a box only for points within [-180, 180] x [-90, 90] (format/spec.md and
#     Geospatial.md: a geography box must hold the edges, which are curves and may cross
#     the antimeridian; floe never writes a wrapping box); a column with a LineString, or
#     a point at x 200, has types but no box; an all-null column has no statistics.
#  2. floe append into a v3 table and floe rewrite: the same statistics; the manifest
#     bounds (avsc) of the all-point geography column are the box of its points, the
#     geography column with edges and the out-of-range one have none.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] &&
  [ -d "$js/node_modules/hyparquet" ] || {
  echo "geo_statistics: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
command -v python3 >/dev/null || { echo "geo_statistics: python3 needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "geo_statistics: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "geo_statistics: FAIL: $*" >&2; exit 1; }
oracle() { (cd "$js" && node geo_oracle.mjs "$@"); }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"

cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"g","required":false,"type":"geometry"},
 {"id":3,"name":"gp","required":false,"type":"geography"},
 {"id":4,"name":"gl","required":false,"type":"geography(srid:4326, karney)"},
 {"id":5,"name":"gr","required":false,"type":"geography"},
 {"id":6,"name":"gn","required":false,"type":"geometry"},
 {"id":7,"name":"s","required":false,"type":{"type":"struct","fields":[
   {"id":8,"name":"gz","required":false,"type":"geometry(EPSG:3857)"}]}}]}
JSON
# 4000 rows, WKB built with struct: g mixes points, big-endian lines and polygons with a
# NaN coordinate; gp points and multipoints near the antimeridian; gl a line across it
# in every 500th row; gr one point at x 200; s.gz XYZM and XYM points (ISO and EWKB)
python3 - "$tmp" <<'PY'
import base64, json, math, struct, sys
d = sys.argv[1]
b = lambda x: base64.b64encode(x).decode()
pt = lambda x, y: struct.pack('<BI2d', 1, 1, x, y)
mpt = lambda *c: struct.pack('<BII', 1, 4, len(c) // 2) + b''.join(pt(c[i], c[i + 1]) for i in range(0, len(c), 2))
line_be = lambda *c: struct.pack('>BII', 0, 2, len(c) // 2) + struct.pack('>%dd' % len(c), *c)
poly = lambda *c: struct.pack('<BIII', 1, 3, 1, len(c) // 2) + struct.pack('<%dd' % len(c), *c)
with open(d + '/in.ndjson', 'w') as f:
    for i in range(4000):
        r = {"id": i}
        k = i % 3
        if k == 0:
            r["g"] = b(pt(i * 0.5, -i * 0.25))
        elif k == 1:
            r["g"] = b(line_be(-i, 3.0, i, 4.0))
        else:
            r["g"] = b(poly(0, 0, i, math.nan, i, i + 1, 0, 0))
        r["gp"] = b(pt(179.5 - (i % 7), -89 + i % 13) if i % 2 else mpt(-179.25, 1, 178, 2.5 + i % 5))
        if i % 500 == 7:
            r["gl"] = b(struct.pack('<BII4d', 1, 2, 2, 170, 10, -170, 20))
        elif i % 5 == 0:
            r["gl"] = b(pt(i % 90, 45))
        if i == 3:
            r["gr"] = b(pt(200, 0))
        elif i % 11 == 0:
            r["gr"] = b(pt(-(i % 180), i % 90))
        r["gn"] = None
        if i % 4 == 0:
            r["s"] = {"gz": b(struct.pack('<BI4d', 1, 3001, i, -i, i * 2, -i * 3))}
        elif i % 4 == 1:
            r["s"] = {"gz": b(struct.pack('<BI3d', 1, 0x40000001, i, i, 7.5))}  # EWKB M
        f.write(json.dumps(r, separators=(',', ':')) + '\n')
# the same rows in four files: convert's batches, and so its row groups, end with them
lines = open(d + '/in.ndjson').read().splitlines(True)
for k in range(4):
    open(d + '/in%d.ndjson' % k, 'w').write(''.join(lines[k * 1000:(k + 1) * 1000]))
PY

# every chunk: hyparquet, DuckDB and the values agree; returns the lines in $tmp/stats
check_file() { # file, what
  oracle stats "$1" > "$tmp/stats" || die "$2: the oracle cannot read $1"
  local n rg path expect r got
  n=$(grep -c '^values ' "$tmp/stats")
  [ "$n" -ge 6 ] || fail "$2: $n geo chunks: $(cat "$tmp/stats")"
  while read -r _ rg path expect; do
    for r in hyparquet duckdb; do
      got=$(grep "^$r $rg $path " "$tmp/stats" | cut -d' ' -f4-)
      [ "$got" = "$expect" ] || fail "$2: $r row group $rg $path: '$got', the values call for '$expect'"
    done
  done < <(grep '^values ' "$tmp/stats")
}

# ---- 1. convert ------------------------------------------------------------------------
"$floe" convert --schema "$tmp/s.json" --row-group-size 16KB "$tmp"/in[0-3].ndjson -o "$tmp/out" \
  > /dev/null 2> "$tmp/err" || die "convert: $(cat "$tmp/err")"
f=$(ls "$tmp"/out/*.parquet)
check_file "$f" convert
cp "$tmp/stats" "$tmp/convert.stats"
rgs=$(grep -c '^values [0-9]* g ' "$tmp/stats")
[ "$rgs" -ge 2 ] || fail "convert wrote $rgs row group(s); the test wants several"
grep -q '^hyparquet 0 g bbox=.* types=1,2,3$' "$tmp/stats" || fail "g: $(grep ' g ' "$tmp/stats")"
grep '^hyparquet [0-9]* gp ' "$tmp/stats" | grep -qv 'bbox=-179.25,179.5,' &&
  fail "gp: no all-point geography box: $(grep ' gp ' "$tmp/stats")"
grep '^hyparquet 0 gl ' "$tmp/stats" | grep -q '^hyparquet 0 gl bbox=none types=1,2$' ||
  fail "gl (a geography line): $(grep ' gl ' "$tmp/stats")"
grep -q '^hyparquet 0 gr bbox=none types=1$' "$tmp/stats" ||
  fail "gr (a geography point at x 200): $(grep ' gr ' "$tmp/stats")"
grep '^hyparquet [0-9]* gn ' "$tmp/stats" | grep -qv ' none$' && fail "gn (all null): $(grep ' gn ' "$tmp/stats")"
grep -q '^hyparquet 0 s.gz bbox=.* z=.* m=.* types=2001,3001$' "$tmp/stats" ||
  fail "s.gz: $(grep ' s.gz ' "$tmp/stats")"
echo "geo_statistics: convert ok"

# ---- 2. append, rewrite, manifest bounds ---------------------------------------------------
"$floe" namespace create ns > /dev/null
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 > /dev/null
"$floe" append ns.t "$tmp/in.ndjson" > /dev/null 2> "$tmp/err" || die "append: $(cat "$tmp/err")"
"$floe" append ns.t "$tmp/in.ndjson" > /dev/null 2> "$tmp/err" || die "append: $(cat "$tmp/err")"
for f in $("$floe" files ns.t --json | python3 -c 'import json,sys
for f in json.load(sys.stdin): print(f["path"].removeprefix("file://"))'); do
  check_file "$f" append
done
meta=$("$floe" table describe ns.t --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))')
oracle bounds --metadata "$meta" > "$tmp/bounds.txt"
gp=$(python3 - "$tmp/in.ndjson" <<'PY'
import base64, json, sys
for l in open(sys.argv[1]):
    v = json.loads(l).get("gp")
    if v: print(base64.b64decode(v).hex())
PY
)
# shellcheck disable=SC2086
want=$(oracle wkb-bbox $gp)
[ "$(grep -c " 3 $want\$" "$tmp/bounds.txt")" = 2 ] ||
  fail "gp manifest bounds: want $want in both files: $(cat "$tmp/bounds.txt")"
grep -Eq ' (4|5|6) lower' "$tmp/bounds.txt" &&
  fail "bounds for gl, gr or gn: $(cat "$tmp/bounds.txt")"
grep -q ' 2 lower' "$tmp/bounds.txt" || fail "no geometry bounds: $(cat "$tmp/bounds.txt")"
"$floe" rewrite ns.t -o rewrite-all=true > /dev/null 2> "$tmp/err" || die "rewrite: $(cat "$tmp/err")"
for f in $("$floe" files ns.t --json | python3 -c 'import json,sys
for f in json.load(sys.stdin): print(f["path"].removeprefix("file://"))'); do
  check_file "$f" rewrite
done
meta=$("$floe" table describe ns.t --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))')
oracle bounds --metadata "$meta" > "$tmp/bounds.txt"
grep -q " 3 $want\$" "$tmp/bounds.txt" || fail "gp bounds after rewrite: want $want: $(cat "$tmp/bounds.txt")"
grep -Eq ' (4|5|6) lower' "$tmp/bounds.txt" && fail "rewrite: bounds for gl, gr or gn"
[ "$fails" = 0 ] || die "$fails checks failed"
echo "geo_statistics: ok"
