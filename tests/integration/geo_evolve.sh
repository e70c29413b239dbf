#!/usr/bin/env bash
# geo_evolve.sh - schema evolution with format v3's geometry, geography and unknown types
# (format/spec.md "Schema Evolution", "CRS").
#
#  1. floe table schema add-column takes geometry, geometry(C), geography(C, A) on a v3
#     table: the type text is kept byte for byte (the CRS's case too), the new columns take
#     WKB from NDJSON and read back, and the files annotate them GEOMETRY(crs=EPSG:3857)
#     as DuckDB reads them (its parquet_schema). A v2 table refuses the column; a malformed CRS or
#     algorithm is refused naming the text.
#  2. widen: geometry(C) to the same type, the CRS in another case or a default spelled
#     out, changes nothing (Iceberg Java compares CRS ignoring case); another CRS, another
#     algorithm, binary to geometry and geometry to binary are refused.
#  3. widen unknown to a primitive type (v3: unknown -> any type): long and geometry; the
#     rows written before read null, new rows their values. unknown to a struct, and long
#     to unknown, are refused.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v python3 >/dev/null || { echo "geo_evolve: python3 needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "geo_evolve: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "geo_evolve: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
"$floe" namespace create ns > /dev/null
meta() { "$floe" table describe "$1" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))'; }
types() { python3 -c 'import json,sys
md=json.load(open(sys.argv[1])); s=[x for x in md["schemas"] if x["schema-id"]==md["current-schema-id"]][0]
for f in s["fields"]: print(f["name"], json.dumps(f["type"]))' "$(meta "$1")"; }
b64pt() { python3 -c 'import base64,struct,sys; print(base64.b64encode(struct.pack("<BI2d",1,1,float(sys.argv[1]),float(sys.argv[2]))).decode())' "$@"; }
hexpt() { python3 -c 'import struct,sys; print(struct.pack("<BI2d",1,1,float(sys.argv[1]),float(sys.argv[2])).hex())' "$@"; }
schema() { "$floe" table schema "$@" > /dev/null 2> "$tmp/err"; }

cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"u","required":false,"type":"unknown"},
 {"id":3,"name":"u2","required":false,"type":"unknown"},
 {"id":4,"name":"bin","required":false,"type":"binary"}]}
JSON
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 > /dev/null
printf '{"id":1,"u":null}\n{"id":2}\n' > "$tmp/a.ndjson"
"$floe" append ns.t "$tmp/a.ndjson" > /dev/null || die "append 1"

# ---- 1. add-column -------------------------------------------------------------------------
schema ns.t add-column shape 'geometry(EPSG:3857)' || fail "add-column geometry(EPSG:3857): $(cat "$tmp/err")"
schema ns.t add-column area 'geography(srid:4326, karney)' || fail "add-column geography: $(cat "$tmp/err")"
schema ns.t add-column plain GEOMETRY || fail "add-column GEOMETRY: $(cat "$tmp/err")"
types ns.t > "$tmp/types"
grep -qx 'shape "geometry(EPSG:3857)"' "$tmp/types" || fail "shape's type: $(cat "$tmp/types")"
grep -qx 'area "geography(srid:4326, karney)"' "$tmp/types" || fail "area's type: $(cat "$tmp/types")"
grep -qx 'plain "geometry"' "$tmp/types" || fail "plain's type: $(cat "$tmp/types")"
for bad in 'geometry(4326)|CRS "4326"' 'geography(srid:4326, nope)|edge algorithm "nope"' \
           'geometry(srid:4326, karney)|malformed geometry type'; do
  schema ns.t add-column bad "${bad%%|*}" && fail "add-column ${bad%%|*} was accepted"
  grep -qF "${bad#*|}" "$tmp/err" || fail "add-column ${bad%%|*}: $(cat "$tmp/err")"
done
printf '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"}]}' > "$tmp/s2.json"
"$floe" table create ns.v2 --schema "$tmp/s2.json" > /dev/null || die "create ns.v2"
schema ns.v2 add-column shape geometry && fail "a v2 table took a geometry column"
grep -q 'needs format version 3' "$tmp/err" || fail "v2 add-column geometry: $(cat "$tmp/err")"
printf '{"id":3,"shape":"%s","area":"%s","plain":"%s"}\n' "$(b64pt 1 2)" "$(b64pt 10 -20)" \
  "$(b64pt 3 4)" > "$tmp/b.ndjson"
"$floe" append ns.t "$tmp/b.ndjson" > /dev/null 2> "$tmp/err" || fail "append 2: $(cat "$tmp/err")"
"$floe" scan ns.t --columns id,shape,area,plain 2>&1 | sort > "$tmp/got" || true
printf '{"id":1,"shape":null,"area":null,"plain":null}\n{"id":2,"shape":null,"area":null,"plain":null}\n{"id":3,"shape":"%s","area":"%s","plain":"%s"}\n' \
  "$(hexpt 1 2)" "$(hexpt 10 -20)" "$(hexpt 3 4)" | diff - "$tmp/got" || fail "scan after add-column"
if command -v node > /dev/null && [ -d "$js/node_modules/@duckdb/node-api" ]; then
  f=$("$floe" files ns.t --json | python3 -c 'import json,sys
for f in json.load(sys.stdin):
    if f["records"] == 1: print(f["path"].removeprefix("file://"))')
  (cd "$js" && node geo_oracle.mjs parquet "$f") > "$tmp/duck.txt" || fail "DuckDB cannot read $f"
  grep -q '^shape GEOMETRY' "$tmp/duck.txt" || fail "DuckDB: $(cat "$tmp/duck.txt")"
  # DuckDB's types name only the CRS it knows (OGC:CRS84 without its spatial extension):
  # the annotation itself, as its parquet_schema reads it
  (cd "$js" && node duckdb_query.mjs "SELECT logical_type FROM parquet_schema('$f') WHERE name = 'shape'") \
    > "$tmp/duck_schema.txt" || fail "DuckDB's parquet_schema cannot read $f"
  grep -qF '"GeometryType(crs=EPSG:3857)"' "$tmp/duck_schema.txt" ||
    fail "DuckDB: shape is $(cat "$tmp/duck_schema.txt")"
  grep -q '^area GEOGRAPHY\|^area GEOMETRY' "$tmp/duck.txt" || fail "DuckDB area: $(cat "$tmp/duck.txt")"
fi
echo "geo_evolve: add-column ok"

# ---- 2. widen among geo types --------------------------------------------------------------
schema ns.t widen shape 'geometry(epsg:3857)' || fail "widen to the same CRS in lower case: $(cat "$tmp/err")"
schema ns.t widen plain 'geometry(OGC:CRS84)' || fail "widen geometry to geometry(OGC:CRS84): $(cat "$tmp/err")"
schema ns.t widen area 'geography(SRID:4326, karney)' || fail "widen geography, CRS case: $(cat "$tmp/err")"
types ns.t > "$tmp/types2"
diff "$tmp/types" "$tmp/types2" > /dev/null || fail "a same-type widen changed the schema: $(cat "$tmp/types2")"
for bad in 'shape|geometry(EPSG:4326)' 'area|geography(srid:4326, spherical)' 'area|geometry' \
           'shape|binary' 'bin|geometry' 'plain|geography'; do
  schema ns.t widen "${bad%%|*}" "${bad#*|}" && fail "widen ${bad%%|*} to ${bad#*|} was accepted"
  grep -q 'is not a promotion the spec allows' "$tmp/err" || fail "widen $bad: $(cat "$tmp/err")"
done
echo "geo_evolve: widen geo ok"

# ---- 3. unknown -> primitive ----------------------------------------------------------------
schema ns.t widen u long || fail "widen unknown to long: $(cat "$tmp/err")"
schema ns.t widen u2 'geometry(EPSG:4326)' || fail "widen unknown to geometry: $(cat "$tmp/err")"
types ns.t > "$tmp/types"
grep -qx 'u "long"' "$tmp/types" && grep -qx 'u2 "geometry(EPSG:4326)"' "$tmp/types" ||
  fail "types after the promotion: $(cat "$tmp/types")"
printf '{"id":4,"u":5,"u2":"%s"}\n' "$(b64pt -1 -2)" > "$tmp/c.ndjson"
"$floe" append ns.t "$tmp/c.ndjson" > /dev/null 2> "$tmp/err" || fail "append 3: $(cat "$tmp/err")"
"$floe" scan ns.t --columns id,u,u2 2>&1 | sort > "$tmp/got" || true
printf '{"id":1,"u":null,"u2":null}\n{"id":2,"u":null,"u2":null}\n{"id":3,"u":null,"u2":null}\n{"id":4,"u":5,"u2":"%s"}\n' \
  "$(hexpt -1 -2)" | diff - "$tmp/got" || fail "scan after unknown -> long, geometry"
"$floe" table create ns.t2 --schema "$tmp/s.json" --property format-version=3 > /dev/null
schema ns.t2 widen u 'struct<a: int>' && fail "unknown to a struct was accepted"
grep -q 'only primitive types are promoted' "$tmp/err" || fail "unknown to struct: $(cat "$tmp/err")"
schema ns.t widen u unknown && fail "long to unknown was accepted"
grep -q 'is not a promotion the spec allows' "$tmp/err" || fail "long to unknown: $(cat "$tmp/err")"
echo "geo_evolve: unknown promotion ok"
[ "$fails" = 0 ] || die "$fails checks failed"
echo "geo_evolve: ok"
