#!/usr/bin/env bash
# geo_unknown.sh - format v3's unknown, geometry and geography types end to end, with
# DuckDB and avsc as the independent readers.
#
#  1. Schemas: floe table create takes unknown, geometry, geometry(C), geography and
#     geography(C, A) on v3 and writes the type strings back byte for byte; a v2 table
#     refuses them naming the column; malformed parameter lists, an unknown edge
#     algorithm, a required unknown and a non-null default are refused naming the field
#     and the text; so is a partition transform of a geometry or geography column.
#  2. floe append of NDJSON (WKB as base64, as binary takes it): floe scan prints the WKB
#     as lowercase hex and unknown as null; a non-null unknown value is quarantined naming
#     its line and field. DuckDB reads floe's file: GEOMETRY columns, the same WKB, no
#     column for unknown. floe append of that file (a copy) into another table reads the
#     same; floe cat prints it; add-column takes unknown and geometry (both read null).
#  3. Manifest bounds (read by avsc): the geometry column's are the bounding box of its
#     values in the spec's x:y[:z][:m] form (computed here by an independent WKB reader);
#     so are those of the geography columns, which hold points only (geo_statistics.sh
#     has the geography columns with edges, which get none); unknown columns have none.
#  4. A table another writer made (its metadata edited as the adversary repro does): the
#     files hold a long column for a field now typed unknown and plain BYTE_ARRAY for a
#     field now typed geometry, and a geography field the files do not hold at all. floe
#     scan (all columns and a projection) reads unknown as null and the WKB as it is;
#     floe rewrite keeps every row (compared before/after), drops the unknown column from
#     the files it writes, annotates GEOMETRY/GEOGRAPHY and records the bounding box.
#  5. --where on a geometry column is refused with a clear error; on unknown only IS NULL
#     / IS NOT NULL apply. floe health reads both tables.
#  6. floe serve takes the same NDJSON: the non-null unknown values are refused with the
#     reason, the rest committed and read back as floe append's.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "geo_unknown: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
command -v python3 >/dev/null || { echo "geo_unknown: python3 needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "geo_unknown: FAIL: $*" >&2; exit 1; }
oracle() { (cd "$js" && node geo_oracle.mjs "$@"); }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
"$floe" namespace create ns > /dev/null
meta() { "$floe" table describe "$1" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))'; }
# WKB values, as hex: built here with struct, so the test does not trust floe's reader
wkb() { python3 -c 'import struct,sys
kind=sys.argv[1]; c=[float(x) for x in sys.argv[2:]]
if kind=="point": b=struct.pack("<BI",1,1)+struct.pack("<2d",*c)
elif kind=="pointz": b=struct.pack("<BI",1,1001)+struct.pack("<3d",*c)
elif kind=="line": b=struct.pack("<BII",1,2,len(c)//2)+struct.pack("<%dd"%len(c),*c)
elif kind=="bepoly": b=struct.pack(">BIII",0,3,1,len(c)//2)+struct.pack(">%dd"%len(c),*c)
print(b.hex())' "$@"; }
b64() { python3 -c 'import base64,sys; print(base64.b64encode(bytes.fromhex(sys.argv[1])).decode())' "$1"; }

# ---- 1. schemas ------------------------------------------------------------------------
cat > "$tmp/geo.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"u","required":false,"type":"unknown"},
 {"id":3,"name":"g","required":false,"type":"geometry"},
 {"id":4,"name":"gg","required":false,"type":"geography(srid:4326, karney)"},
 {"id":5,"name":"gp","required":false,"type":"geometry(srid:3857)"},
 {"id":6,"name":"gd","required":false,"type":"geography"}]}
JSON
"$floe" table create ns.v2 --schema "$tmp/geo.json" > /dev/null 2> "$tmp/err" &&
  fail "a v2 table took unknown/geometry"
grep -q 'column u has type unknown, which needs format version 3' "$tmp/err" ||
  fail "v2 refusal: $(cat "$tmp/err")"
"$floe" table create ns.t --schema "$tmp/geo.json" --property format-version=3 > /dev/null ||
  fail "create ns.t"
for t in 'geometry' 'geography(srid:4326, karney)' 'geometry(srid:3857)' 'geography' \
         '"unknown"'; do
  grep -qF "${t}" "$(meta ns.t)" || fail "metadata lost the type $t"
done
grep -qF '"geography(srid:4326, karney)"' "$(meta ns.t)" || fail "geography text not kept byte for byte"

bad_type() { # type, expected text in the error
  printf '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"bad","required":false,"type":"%s"}]}' "$1" > "$tmp/bad.json"
  "$floe" table create ns.bad --schema "$tmp/bad.json" --property format-version=3 \
    > /dev/null 2> "$tmp/err" && fail "type $1 was accepted"
  grep -qF "$2" "$tmp/err" || fail "type $1: error does not say \"$2\": $(cat "$tmp/err")"
  grep -qF "bad" "$tmp/err" || fail "type $1: error does not name the field: $(cat "$tmp/err")"
}
bad_type 'geometry(srid:4326, spherical)' 'malformed geometry type "geometry(srid:4326, spherical)"'
bad_type 'geography(srid:4326, nope)' 'edge algorithm "nope"'
bad_type 'geography(' 'malformed geography type "geography("'
bad_type 'geometry()' 'malformed geometry type "geometry()"'
bad_type 'geometry(4326)' 'CRS "4326"'
bad_type 'geography(srid:4326, karney, x)' 'malformed geography type'
bad_type 'geometryx' 'malformed geometry type "geometryx"'
printf '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"bad","required":true,"type":"unknown"}]}' > "$tmp/bad.json"
"$floe" table create ns.bad --schema "$tmp/bad.json" --property format-version=3 \
  > /dev/null 2> "$tmp/err" && fail "a required unknown was accepted"
grep -q "field 'bad': type unknown must be optional" "$tmp/err" || fail "required unknown: $(cat "$tmp/err")"
printf '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"bad","required":false,"type":"geometry","write-default":"POINT (1 2)"}]}' > "$tmp/bad.json"
"$floe" table create ns.bad --schema "$tmp/bad.json" --property format-version=3 \
  > /dev/null 2> "$tmp/err" && fail "a geometry default was accepted"
grep -q 'field bad: write-default: a column of type unknown, geometry or geography must default to null' \
  "$tmp/err" || fail "geometry default: $(cat "$tmp/err")"
for p in g 'bucket(4, gg)' 'truncate(4, gp)'; do
  "$floe" table create "ns.part$RANDOM" --schema "$tmp/geo.json" --property format-version=3 \
    --partition "$p" > /dev/null 2> "$tmp/err" && fail "partition $p was accepted"
  grep -Eq 'is a (geometry|geography) column, which no partition transform takes' "$tmp/err" ||
    fail "partition $p: $(cat "$tmp/err")"
done
echo "geo_unknown: schemas ok"

# ---- 2. append, scan, DuckDB -------------------------------------------------------------
p1=$(wkb point 1 2); l1=$(wkb line -3 4 5 -6); z1=$(wkb pointz 10 -20 7)
poly=$(wkb bepoly 0 0 8 0 8 9 0 0); gg1=$(wkb point 170 -45)
cat > "$tmp/in.ndjson" <<JSON
{"id":1,"u":null,"g":"$(b64 "$p1")","gg":"$(b64 "$gg1")","gp":"$(b64 "$poly")"}
{"id":2,"g":"$(b64 "$l1")","gd":"$(b64 "$p1")"}
{"id":3,"u":5,"g":"$(b64 "$p1")"}
{"id":4,"g":"$(b64 "$z1")","gp":null}
{"id":5,"u":{"a":1}}
JSON
cat > "$tmp/want.ndjson" <<JSON
{"id":1,"u":null,"g":"$p1","gg":"$gg1","gp":"$poly","gd":null}
{"id":2,"u":null,"g":"$l1","gg":null,"gp":null,"gd":"$p1"}
{"id":4,"u":null,"g":"$z1","gg":null,"gp":null,"gd":null}
JSON
"$floe" append ns.t "$tmp/in.ndjson" > /dev/null 2> "$tmp/err" || fail "append: $(cat "$tmp/err")"
find "$tmp/wh" -path '*quarantine*' -name '*.ndjson' -exec cat {} + > "$tmp/q.ndjson"
for line in 3 5; do
  grep "\"line\":$line," "$tmp/q.ndjson" | grep -q "field 'u': type unknown takes only null" ||
    fail "line $line not quarantined for its unknown value: $(cat "$tmp/q.ndjson")"
done
"$floe" scan ns.t | sort > "$tmp/got.ndjson"
diff "$tmp/want.ndjson" "$tmp/got.ndjson" || fail "scan of ns.t differs"
"$floe" scan ns.t --columns id,g | sort > "$tmp/got.ndjson"
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(json.dumps({"id":r["id"],"g":r["g"]},separators=(",",":")))' \
  "$tmp/want.ndjson" | diff - "$tmp/got.ndjson" || fail "projected scan differs"
file=$("$floe" files ns.t --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["path"].removeprefix("file://"))')
oracle parquet "$file" > "$tmp/duck.txt" || fail "DuckDB cannot read floe's file"
grep -qx 'g GEOMETRY' "$tmp/duck.txt" || fail "DuckDB does not see g as GEOMETRY: $(cat "$tmp/duck.txt")"
grep -q '^u ' "$tmp/duck.txt" && fail "floe wrote a column for unknown: $(cat "$tmp/duck.txt")"
# DuckDB gives WKB back little-endian: the big-endian polygon is compared as its WKT
grep '^{' "$tmp/duck.txt" | python3 -c 'import json,sys
rows=sorted((json.loads(l) for l in sys.stdin), key=lambda r: r["id"])
for r in rows: print(json.dumps({"id":r["id"],"u":None,**{k:r[k] for k in ("g","gg","gp","gd")}},separators=(",",":")))' \
  | sed "s/\"gp\":\"[0-9a-f]*\"/\"gp\":\"$poly\"/" | diff "$tmp/want.ndjson" - ||
  fail "DuckDB reads other WKB than floe wrote"
grep -q '"gp_wkt":"POLYGON ((0 0, 8 0, 8 9, 0 0))"' "$tmp/duck.txt" ||
  fail "DuckDB reads another polygon: $(cat "$tmp/duck.txt")"
"$floe" inspect "$file" > "$tmp/inspect.txt"
grep -q 'BYTE_ARRAY GEOGRAPHY(crs=srid:4326, algorithm=KARNEY) gg' "$tmp/inspect.txt" ||
  fail "gg not annotated GEOGRAPHY: $(cat "$tmp/inspect.txt")"
grep -q 'BYTE_ARRAY GEOMETRY g = 3' "$tmp/inspect.txt" || fail "g not annotated GEOMETRY"
# floe append of a Parquet file with GEOMETRY/GEOGRAPHY columns (floe's own, copied)
cp "$file" "$tmp/copy.parquet"
"$floe" table create ns.ap --schema "$tmp/geo.json" --property format-version=3 > /dev/null
"$floe" append ns.ap "$tmp/copy.parquet" > /dev/null || fail "append of a GEOMETRY file"
"$floe" scan ns.ap | sort | diff "$tmp/want.ndjson" - || fail "appended GEOMETRY file reads otherwise"
"$floe" cat "$tmp/copy.parquet" | grep -qF "\"g\":\"$l1\"" || fail "floe cat of the file"
# schema evolution: an unknown column can be added (it reads null), a geometry one too
# (geo_evolve.sh has more)
"$floe" table schema ns.ap add-column later unknown > /dev/null || fail "add-column unknown"
"$floe" scan ns.ap --columns id,later | grep -c '"later":null' | grep -qx 3 || fail "added unknown"
"$floe" table schema ns.ap add-column shape geometry > /dev/null 2> "$tmp/err" ||
  fail "add-column geometry: $(cat "$tmp/err")"
"$floe" scan ns.ap --columns id,shape | grep -c '"shape":null' | grep -qx 3 || fail "added geometry"
echo "geo_unknown: append and scan ok"

# ---- 3. bounds -----------------------------------------------------------------------------
oracle bounds --metadata "$(meta ns.t)" > "$tmp/bounds.txt"
want=$(oracle wkb-bbox "$p1" "$l1" "$z1")
grep -q " 3 $want\$" "$tmp/bounds.txt" || fail "geometry bounds: want $want: $(cat "$tmp/bounds.txt")"
want=$(oracle wkb-bbox "$poly")
grep -q " 5 $want\$" "$tmp/bounds.txt" || fail "geometry(srid:3857) bounds: want $want: $(cat "$tmp/bounds.txt")"
grep -q ' 2 lower' "$tmp/bounds.txt" && fail "bounds for unknown: $(cat "$tmp/bounds.txt")"
want=$(oracle wkb-bbox "$gg1")
grep -q " 4 $want\$" "$tmp/bounds.txt" || fail "geography bounds: want $want: $(cat "$tmp/bounds.txt")"
want=$(oracle wkb-bbox "$p1")
grep -q " 6 $want\$" "$tmp/bounds.txt" || fail "geography bounds: want $want: $(cat "$tmp/bounds.txt")"
echo "geo_unknown: bounds ok"

# ---- 4. a table another writer made --------------------------------------------------------
cat > "$tmp/plain.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"n","required":false,"type":"long"},
 {"id":3,"name":"shape","required":false,"type":"binary"}]}
JSON
"$floe" table create ns.o --schema "$tmp/plain.json" --property format-version=3 > /dev/null
for i in 1 2 3; do
  printf '{"id":%d,"n":%d,"shape":"%s"}\n{"id":%d,"n":null}\n' \
    "$i" "$((i * 7))" "$(b64 "$(wkb line "$i" "-$i" "$((i * 3))" 0.5)")" "$((i + 10))"
done > "$tmp/o.ndjson"
"$floe" append ns.o "$tmp/o.ndjson" > /dev/null || fail "append ns.o"
python3 - "$(meta ns.o)" <<'PY'
import json, sys
p = sys.argv[1]
md = json.load(open(p))
f = md['schemas'][-1]['fields']
f[1]['type'] = 'unknown'
f[2]['type'] = 'geometry(OGC:CRS84)'
f.append({"id": 4, "name": "area", "required": False, "type": "geography(srid:4326,spherical)"})
md['last-column-id'] = 4
json.dump(md, open(p, 'w'))
PY
"$floe" scan ns.o | sort > "$tmp/before.ndjson" || fail "scan of the edited table"
[ "$(wc -l < "$tmp/before.ndjson")" = 6 ] || fail "edited table: $(cat "$tmp/before.ndjson")"
grep -q '"n":[0-9]' "$tmp/before.ndjson" && fail "unknown read the file's values: $(cat "$tmp/before.ndjson")"
grep -q '"id":2,"n":null,"shape":"'"$(wkb line 2 -2 6 0.5)"'","area":null' "$tmp/before.ndjson" ||
  fail "edited table rows: $(cat "$tmp/before.ndjson")"
"$floe" scan ns.o --columns id > /dev/null || fail "projection of the edited table"
"$floe" rewrite ns.o -o rewrite-all=true > /dev/null || fail "rewrite ns.o"
"$floe" scan ns.o | sort | diff "$tmp/before.ndjson" - || fail "rows changed in the rewrite"
file=$("$floe" files ns.o --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["path"].removeprefix("file://"))')
oracle parquet "$file" > "$tmp/duck.txt" || fail "DuckDB cannot read the rewritten file"
grep -q '^n ' "$tmp/duck.txt" && fail "the rewrite kept a column for unknown: $(cat "$tmp/duck.txt")"
grep -qx "shape GEOMETRY('OGC:CRS84')" "$tmp/duck.txt" || fail "shape not GEOMETRY: $(cat "$tmp/duck.txt")"
grep -q 'BYTE_ARRAY GEOGRAPHY(crs=srid:4326, algorithm=SPHERICAL) area' <<< "$("$floe" inspect "$file")" ||
  fail "area not annotated GEOGRAPHY"
want=$(oracle wkb-bbox "$(wkb line 1 -1 3 0.5)" "$(wkb line 2 -2 6 0.5)" "$(wkb line 3 -3 9 0.5)")
oracle bounds --metadata "$(meta ns.o)" > "$tmp/bounds.txt"
grep -q " 3 $want\$" "$tmp/bounds.txt" || fail "rewrite bounds: want $want: $(cat "$tmp/bounds.txt")"
grep -Eq ' (2|4) lower' "$tmp/bounds.txt" && fail "rewrite bounds for unknown/geography: $(cat "$tmp/bounds.txt")"
echo "geo_unknown: other writer's table and rewrite ok"

# ---- 5. filters, health --------------------------------------------------------------------
"$floe" scan ns.t --where "g is null" > /dev/null 2> "$tmp/err" && fail "--where on geometry ran"
grep -q 'column g is a geometry column; floe does not filter on geometry or geography' "$tmp/err" ||
  fail "--where on geometry: $(cat "$tmp/err")"
"$floe" scan ns.t --where "u is null" | sort | diff "$tmp/want.ndjson" - || fail "u is null"
[ -z "$("$floe" scan ns.t --where "u is not null")" ] || fail "u is not null selected rows"
"$floe" scan ns.t --where "u = 1" > /dev/null 2> "$tmp/err" && fail "u = 1 ran"
grep -q 'column u has type unknown (always null): only IS NULL and IS NOT NULL apply' "$tmp/err" ||
  fail "u = 1: $(cat "$tmp/err")"
"$floe" health ns.t > /dev/null || fail "health ns.t"
"$floe" health ns.o > /dev/null || fail "health ns.o"

# ---- 6. floe serve -------------------------------------------------------------------------
if command -v curl > /dev/null; then
  "$floe" table create ns.s --schema "$tmp/geo.json" --property format-version=3 > /dev/null
  "$floe" serve --warehouse "$tmp/wh" --listen 127.0.0.1:0 --port-file "$tmp/port" \
    2> "$tmp/server.log" &
  pid=$!
  trap 'kill -9 "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
  for _ in $(seq 400); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  [ -s "$tmp/port" ] || fail "serve did not start: $(cat "$tmp/server.log")"
  port=$(cat "$tmp/port")
  curl -s -XPOST "http://127.0.0.1:$port/v1/tables/ns.s/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary "@$tmp/in.ndjson" > "$tmp/answer"
  grep -q '"accepted":3,"rejected":2' "$tmp/answer" || fail "serve: $(cat "$tmp/answer")"
  grep -q "field 'u': type unknown takes only null, found number" "$tmp/answer" ||
    fail "serve: no reason for the unknown value: $(cat "$tmp/answer")"
  curl -s -XPOST "http://127.0.0.1:$port/v1/admin/flush?wait=true&timeout=120" > "$tmp/flush"
  grep -q '"complete":true' "$tmp/flush" || fail "serve flush: $(cat "$tmp/flush")"
  kill -TERM "$pid"
  wait "$pid" || fail "serve exit status $?"
  "$floe" scan ns.s | sort | diff "$tmp/want.ndjson" - || fail "serve: rows differ"
  echo "geo_unknown: serve ok"
fi
echo "geo_unknown: ok"
