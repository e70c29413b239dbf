#!/usr/bin/env bash
# geo_append_parquet.sh - floe append of Parquet files another writer made (DuckDB) into a
# table with geometry and geography columns (format/spec.md Appendix G: their values are
# WKB; "Bounds for Geometry and Geography").
#
#  1. A DuckDB file (GEOMETRY columns, one geography column of points, one with a line)
#     appends; its manifest bounds are the bounding box of its values as an independent
#     WKB reader computes it (geo_oracle.mjs wkb-bbox), and equal those floe's writer
#     records for the same values appended as NDJSON and for a file floe convert wrote
#     and floe append added: x:y:z for the geometry with a POINT Z, x:y for the geography
#     of points, none for the geography with a line.
#  2. A DuckDB file of several row groups whose BLOB column holds one value that is not
#     WKB (row 2500, nulls before it) is refused naming the file, the column and the row;
#     so is one whose geography value is a truncated point (row 1). The table is
#     unchanged (same metadata, same rows), also when a good file is appended with the
#     bad one in the same command.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "geo_append_parquet: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
command -v python3 >/dev/null || { echo "geo_append_parquet: python3 needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "geo_append_parquet: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "geo_append_parquet: FAIL: $*" >&2; exit 1; }
oracle() { (cd "$js" && node geo_oracle.mjs "$@"); }
duck() { (cd "$js" && node duckdb_query.mjs "$1") > /dev/null || die "DuckDB: $1"; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
"$floe" namespace create ns > /dev/null
meta() { "$floe" table describe "$1" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))'; }
# the bounds of a table's geo columns (ids 2 to 4), one line each, without the file's name
bounds() { oracle bounds --metadata "$(meta "$1")" | cut -d' ' -f2- | grep '^[234] ' | sort || true; }

cat > "$tmp/s.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},
 {"id":2,"name":"g","required":false,"type":"geometry"},
 {"id":3,"name":"gp","required":false,"type":"geography"},
 {"id":4,"name":"gl","required":false,"type":"geography(OGC:CRS84, karney)"}]}
JSON
for t in t ref conv; do
  "$floe" table create "ns.$t" --schema "$tmp/s.json" --property format-version=3 > /dev/null
done

# ---- 1. a DuckDB file with valid WKB ---------------------------------------------------------
# DuckDB writes no GEOGRAPHY annotation: the geography columns are its WKB as plain BLOB
duck "COPY (SELECT id, g, ST_AsWKB(gp) AS gp, ST_AsWKB(gl) AS gl FROM (VALUES
  (1, 'POINT(1 2)'::GEOMETRY, 'POINT(10 20)'::GEOMETRY, 'POINT(1 1)'::GEOMETRY),
  (2, NULL, 'MULTIPOINT((3 4),(-5 6))'::GEOMETRY, 'LINESTRING(170 10, -170 20)'::GEOMETRY),
  (3, 'LINESTRING(0 0, -3 7)'::GEOMETRY, NULL, NULL),
  (4, 'POINT Z(1 2 3)'::GEOMETRY, 'POINT(0 -80)'::GEOMETRY, 'POINT(2 2)'::GEOMETRY))
  t(id, g, gp, gl)) TO '$tmp/duck.parquet'
  (FORMAT parquet, GEOPARQUET_VERSION 'V2', FIELD_IDS {id: 1, g: 2, gp: 3, gl: 4})"
"$floe" append ns.t "$tmp/duck.parquet" > /dev/null 2> "$tmp/err" ||
  fail "append of DuckDB's file: $(cat "$tmp/err")"
# the values as DuckDB reads them back (WKB hex), for the oracle and the NDJSON
oracle parquet "$tmp/duck.parquet" | grep '^{' > "$tmp/duck.rows" || die "DuckDB reads its file"
col() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    v = json.loads(l)[sys.argv[2]]
    if v is not None: print(v)' "$tmp/duck.rows" "$1"; }
[ "$(col g | wc -l)" = 3 ] || die "DuckDB's rows: $(cat "$tmp/duck.rows")"
bounds ns.t > "$tmp/t.bounds"
want=$(oracle wkb-bbox $(col g))
grep -qx "2 $want" "$tmp/t.bounds" || fail "geometry bounds: want $want: $(cat "$tmp/t.bounds")"
want=$(oracle wkb-bbox $(col gp))
grep -qx "3 $want" "$tmp/t.bounds" || fail "geography (points) bounds: want $want: $(cat "$tmp/t.bounds")"
grep -q '^4 ' "$tmp/t.bounds" && fail "bounds for a geography with a line: $(cat "$tmp/t.bounds")"
# floe's writer: the same values as NDJSON, and a file floe convert wrote, appended
python3 - "$tmp/duck.rows" > "$tmp/same.ndjson" <<'PY'
import base64, json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(json.dumps({k: (base64.b64encode(bytes.fromhex(r[k])).decode() if r[k] else None)
                      for k in ("g", "gp", "gl")} | {"id": r["id"]}))
PY
"$floe" append ns.ref "$tmp/same.ndjson" > /dev/null 2> "$tmp/err" || die "append NDJSON: $(cat "$tmp/err")"
bounds ns.ref > "$tmp/ref.bounds"
[ "$(wc -l < "$tmp/ref.bounds")" = 2 ] || die "the writer's bounds: $(cat "$tmp/ref.bounds")"
diff "$tmp/ref.bounds" "$tmp/t.bounds" > /dev/null ||
  fail "bounds differ from floe's writer's: writer $(cat "$tmp/ref.bounds"), append $(cat "$tmp/t.bounds")"
"$floe" convert --schema "$tmp/s.json" "$tmp/same.ndjson" -o "$tmp/conv" > /dev/null 2> "$tmp/err" ||
  die "convert: $(cat "$tmp/err")"
"$floe" append ns.conv "$tmp"/conv/*.parquet > /dev/null 2> "$tmp/err" ||
  fail "append of floe convert's file: $(cat "$tmp/err")"
bounds ns.conv > "$tmp/conv.bounds"
diff "$tmp/ref.bounds" "$tmp/conv.bounds" > /dev/null ||
  fail "bounds of convert's file appended: $(cat "$tmp/conv.bounds"), writer $(cat "$tmp/ref.bounds")"
"$floe" scan ns.t | sort > "$tmp/t.scan"
"$floe" scan ns.ref | sort | diff - "$tmp/t.scan" || fail "the appended file reads other values"
echo "geo_append_parquet: valid WKB ok"

# ---- 2. values that are not WKB -------------------------------------------------------------
# rows 0..4999 in row groups of 2048: every 7th null, row 2500 bytes that are no WKB
duck "COPY (SELECT i AS id,
  CASE WHEN i % 7 = 0 THEN NULL WHEN i = 2500 THEN from_hex('02010000000000')
       ELSE ST_AsWKB(('POINT(' || i || ' ' || -i || ')')::GEOMETRY) END AS g
  FROM range(5000) t(i)) TO '$tmp/bad.parquet'
  (FORMAT parquet, ROW_GROUP_SIZE 2048, FIELD_IDS {id: 1, g: 2})"
"$floe" inspect --json "$tmp/bad.parquet" |
  python3 -c 'import json,sys; sys.exit(len(json.load(sys.stdin)["row_groups"]) < 2)' ||
  fail "bad.parquet has one row group"
duck "COPY (SELECT * FROM (VALUES (1, ST_AsWKB('POINT(1 2)'::GEOMETRY)), (2, from_hex('0101000000000000000000f03f')),
  (3, NULL)) t(id, gp)) TO '$tmp/trunc.parquet' (FORMAT parquet, FIELD_IDS {id: 1, gp: 3})"
duck "COPY (SELECT 7 AS id, 'POINT(5 5)'::GEOMETRY AS g) TO '$tmp/good2.parquet'
  (FORMAT parquet, FIELD_IDS {id: 1, g: 2})"
m0=$(meta ns.t)
refused() { # FILE COLUMN ROW FILES...: the append is refused naming the file, column, row
  local f=$1 c=$2 row=$3
  shift 3
  if "$floe" append ns.t "$@" > /dev/null 2> "$tmp/err"; then
    fail "append of $* was accepted"
    return
  fi
  grep -qF "$f" "$tmp/err" || fail "the error does not name $f: $(cat "$tmp/err")"
  grep -qF "column $c, row $row " "$tmp/err" || fail "the error does not name column $c, row $row: $(cat "$tmp/err")"
  grep -q 'not WKB' "$tmp/err" || fail "the error does not say why: $(cat "$tmp/err")"
  [ "$(meta ns.t)" = "$m0" ] || fail "append of $* changed the table"
}
refused bad.parquet g 2500 "$tmp/bad.parquet"
refused trunc.parquet gp 1 "$tmp/trunc.parquet"
refused bad.parquet g 2500 "$tmp/good2.parquet" "$tmp/bad.parquet"
"$floe" scan ns.t | sort | diff -q "$tmp/t.scan" - > /dev/null || fail "the table's rows changed"
"$floe" append ns.t "$tmp/good2.parquet" > /dev/null 2> "$tmp/err" || fail "append good2: $(cat "$tmp/err")"
echo "geo_append_parquet: values not WKB refused ok"

# ---- 3. a file column annotated with another geo type ------------------------------------------
# GEOMETRY into a geography column, and GEOMETRY('OGC:CRS83') (DuckDB writes that CRS as
# PROJJSON text) into a geometry (OGC:CRS84) column: refused naming both types, the table
# unchanged. CRSs are compared as text ignoring case (floe has no CRS library): a file floe
# wrote with geometry(OGC:CRS83) appends into geometry(ogc:crs83); DuckDB's PROJJSON does not.
duck "COPY (SELECT 8 AS id, 'POINT(1 1)'::GEOMETRY AS gp) TO '$tmp/kind.parquet'
  (FORMAT parquet, GEOPARQUET_VERSION 'V2', FIELD_IDS {id: 1, gp: 3})"
duck "COPY (SELECT 9 AS id, 'POINT(1 1)'::GEOMETRY('OGC:CRS83') AS g) TO '$tmp/crs.parquet'
  (FORMAT parquet, GEOPARQUET_VERSION 'V2', FIELD_IDS {id: 1, g: 2})"
mismatch() { # TABLE FILE COLUMN TABLE-TYPE
  local m0
  m0=$(meta "$1")
  if "$floe" append "$1" "$tmp/$2" > /dev/null 2> "$tmp/err"; then
    fail "append of $2 (another geo type) into $1 was accepted"
    return
  fi
  grep -qF "column $3 is " "$tmp/err" && grep -qF "in the file but $4 in the table" "$tmp/err" ||
    fail "the error for $2 does not name the column and both types: $(cat "$tmp/err")"
  [ "$(meta "$1")" = "$m0" ] || fail "append of $2 changed $1"
}
mismatch ns.t kind.parquet gp geography
grep -qF 'GEOMETRY' "$tmp/err" || fail "the error does not give the file's type: $(cat "$tmp/err")"
mismatch ns.t crs.parquet g geometry
grep -qF 'GEOMETRY(crs=' "$tmp/err" || fail "the error does not give the file's CRS: $(cat "$tmp/err")"
for crs in OGC:CRS83 ogc:crs83; do
  cat > "$tmp/s_$crs.json" <<JSON
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},
 {"id":2,"name":"g","required":false,"type":"geometry($crs)"}]}
JSON
done
"$floe" table create ns.m --schema "$tmp/s_ogc:crs83.json" --property format-version=3 > /dev/null
echo '{"id":10,"g":"AQEAAAAAAAAAAADwPwAAAAAAAPA/"}' > "$tmp/m.ndjson"
"$floe" convert --schema "$tmp/s_OGC:CRS83.json" "$tmp/m.ndjson" -o "$tmp/mconv" > /dev/null 2> "$tmp/err" ||
  die "convert: $(cat "$tmp/err")"
"$floe" append ns.m "$tmp"/mconv/*.parquet > /dev/null 2> "$tmp/err" ||
  fail "append of a geometry(OGC:CRS83) file into geometry(ogc:crs83): $(cat "$tmp/err")"
[ "$("$floe" scan ns.m | wc -l)" = 1 ] || fail "ns.m does not hold the appended row"
mismatch ns.m crs.parquet g "geometry(ogc:crs83)"
echo "geo_append_parquet: other geo types refused ok"
# ---- 4. floe append --split: a file spanning partitions is rewritten per partition --------------
# bad.parquet (ids 0..4999, not WKB at row 2500) into a table partitioned by bucket(4, id):
# refused as in 2 (the split would have taken the bytes as they are); the same file without
# its bad value is split and appended
"$floe" table create ns.p --schema "$tmp/s.json" --property format-version=3 \
  --partition "bucket(4, id)" > /dev/null
m0=$(meta ns.p)
if "$floe" append ns.p "$tmp/bad.parquet" --split > /dev/null 2> "$tmp/err"; then
  fail "append --split of bad.parquet was accepted"
else
  grep -qF "column g, row 2500 " "$tmp/err" && grep -q 'not WKB' "$tmp/err" ||
    fail "append --split: the error does not name column g, row 2500: $(cat "$tmp/err")"
fi
[ "$(meta ns.p)" = "$m0" ] || fail "append --split of bad.parquet changed the table"
duck "COPY (SELECT * FROM '$tmp/bad.parquet' WHERE id <> 2500) TO '$tmp/fixed.parquet'
  (FORMAT parquet, ROW_GROUP_SIZE 2048, FIELD_IDS {id: 1, g: 2})"
"$floe" append ns.p "$tmp/fixed.parquet" --split > /dev/null 2> "$tmp/err" ||
  fail "append --split of fixed.parquet: $(cat "$tmp/err")"
[ "$("$floe" scan ns.p | wc -l)" = 4999 ] || fail "ns.p does not hold the 4999 rows of fixed.parquet"
echo "geo_append_parquet: --split checks WKB ok"
[ "$fails" = 0 ] || die "$fails checks failed"
echo "geo_append_parquet: ok"
