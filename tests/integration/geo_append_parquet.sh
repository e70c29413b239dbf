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
duck "COPY (SELECT * FROM (VALUES
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
[ "$fails" = 0 ] || die "$fails checks failed"
echo "geo_append_parquet: ok"
