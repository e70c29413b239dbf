#!/usr/bin/env bash
# timestamp_ns.sh - nanosecond timestamps (timestamp_ns, timestamptz_ns; format v3) end to
# end, with DuckDB as the independent reader and writer.
#
#  1. floe convert: ISO strings with 0 to 9 fraction digits, offsets on timestamptz_ns,
#     integers (nanoseconds since the epoch), the first and last representable instants;
#     values outside 1677-09-21..2262-04-11, 10 fraction digits and a zone on timestamp_ns
#     are quarantined naming their line and the reason. The file's columns are INT64 TIMESTAMP(NANOS, false/true); floe cat
#     prints every value with 9 digits, as expected text for text.
#  2. DuckDB reads the file: epoch_ns of every timestamp_ns value equals floe's, row for
#     row; timestamptz_ns (DuckDB has no such type, it reads microseconds) equals floe's
#     value cut to microseconds. DuckDB writes a TIMESTAMP_NS file: floe cat prints what
#     floe's own file holds for the same input.
#  3. A v2 table refuses the schema (needs format version 3); a v3 table partitioned by
#     day(ts), hour(tz) and bucket(8, ts) takes the NDJSON (floe append) and DuckDB's file;
#     partition values are the spec's (bucket hashes microseconds: Appendix B's
#     2017-11-16T22:31:08.000001001 -> -1207196810); floe scan prints floe cat's rows;
#     manifest bounds equal DuckDB's min/max in nanoseconds (bounds_oracle.mjs check).
#  4. --where with nanosecond literals (9 digits, integers, offsets) selects exactly; a
#     file whose maximum is 1 ns below the literal is skipped by column metrics; 10
#     fraction digits and a value out of range are usage errors.
#  5. floe rewrite compacts the files; the scan is unchanged and DuckDB reads the new
#     files to the same nanoseconds.
#  6. floe serve into the v3 table: an out-of-range value is quarantined with the reason,
#     the rest committed to the nanosecond.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "timestamp_ns: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
command -v curl >/dev/null || { echo "timestamp_ns: curl needed"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "timestamp_ns: FAIL: $*" >&2; exit 1; }
duck() { (cd "$js" && node duckdb_query.mjs "$1"); }
lit() { printf "'%s'" "${1//\'/\'\'}"; }

cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"ts","required":false,"type":"timestamp_ns"},
 {"id":3,"name":"tz","required":false,"type":"timestamptz_ns"}]}
JSON
# input, then what floe prints for it (null where a field is missing)
cat > "$tmp/in.ndjson" <<'JSON'
{"id":1,"ts":"2026-10-06T14:00:00.123456789","tz":"2026-10-06T14:00:00.123456789+02:00"}
{"id":2,"ts":"2026-10-06T14:00:00.123456790","tz":"2026-10-06T12:00:00.123456790Z"}
{"id":3,"ts":"2026-10-06 14:00","tz":"2026-10-06T14:00:00.5-0130"}
{"id":4,"ts":1791295200123456789,"tz":-1}
{"id":5,"ts":"1969-12-31T23:59:59.999999999","tz":"1969-12-31T23:59:59.999999999Z"}
{"id":6,"ts":"1677-09-21T00:12:43.145224194","tz":"2262-04-11T23:47:16.854775806Z"}
{"id":7,"ts":"2017-11-16T22:31:08.000001001","tz":"2017-11-16T14:31:08.000001001-08:00"}
{"id":8,"ts":"1677-09-21T00:12:43.145224191","tz":null}
{"id":9,"ts":"2262-04-11T23:47:16.854775808"}
{"id":10,"ts":"2026-10-06T14:00:00.1234567891"}
{"id":11,"tz":"1677-09-21T00:12:43Z"}
{"id":12}
{"id":13,"ts":"1960-02-29T23:59:59.000000001","tz":"2000-01-01T00:00:00.000000001+18:00"}
{"id":14,"ts":"2026-10-06T14:00:00Z"}
JSON
cat > "$tmp/want.ndjson" <<'JSON'
{"id":1,"ts":"2026-10-06T14:00:00.123456789","tz":"2026-10-06T12:00:00.123456789Z"}
{"id":2,"ts":"2026-10-06T14:00:00.123456790","tz":"2026-10-06T12:00:00.123456790Z"}
{"id":3,"ts":"2026-10-06T14:00:00.000000000","tz":"2026-10-06T15:30:00.500000000Z"}
{"id":4,"ts":"2026-10-06T14:00:00.123456789","tz":"1969-12-31T23:59:59.999999999Z"}
{"id":5,"ts":"1969-12-31T23:59:59.999999999","tz":"1969-12-31T23:59:59.999999999Z"}
{"id":6,"ts":"1677-09-21T00:12:43.145224194","tz":"2262-04-11T23:47:16.854775806Z"}
{"id":7,"ts":"2017-11-16T22:31:08.000001001","tz":"2017-11-16T22:31:08.000001001Z"}
{"id":12,"ts":null,"tz":null}
{"id":13,"ts":"1960-02-29T23:59:59.000000001","tz":"1999-12-31T06:00:00.000000001Z"}
JSON

# ---- 1. convert ------------------------------------------------------------------------
"$floe" convert -s "$tmp/schema.json" -o "$tmp/conv" "$tmp/in.ndjson" > /dev/null || fail "convert"
"$floe" cat "$tmp/conv"/part-*.parquet > "$tmp/cat.ndjson" || fail "floe cat"
diff "$tmp/want.ndjson" "$tmp/cat.ndjson" || fail "floe cat of the converted file"
q=$tmp/conv/_quarantine/quarantine.ndjson
[ "$(grep -c . "$q")" = 5 ] || fail "quarantine: $(cat "$q")"
for line in 8 9 11; do
  grep "\"line\":$line," "$q" | grep -q 'outside the nanosecond timestamp range' ||
    fail "line $line not quarantined as out of range: $(cat "$q")"
done
grep '"line":10,' "$q" | grep -q '10 fraction digits (at most 9' ||
  fail "line 10 (10 digits): $(cat "$q")"
grep '"line":14,' "$q" | grep -q 'carries one (use timestamptz_ns)' ||
  fail "line 14 (a zone on timestamp_ns): $(cat "$q")"
"$floe" inspect "$tmp/conv"/part-*.parquet > "$tmp/inspect.txt"
grep -q 'optional INT64 TIMESTAMP(NANOS,false) ts = 2' "$tmp/inspect.txt" &&
  grep -q 'optional INT64 TIMESTAMP(NANOS,true) tz = 3' "$tmp/inspect.txt" ||
  fail "Parquet types: $(cat "$tmp/inspect.txt")"
echo "timestamp_ns: convert ok (9 rows, 5 quarantined)"

# ---- 2. DuckDB -------------------------------------------------------------------------
# floe's values in nanoseconds (and cut to microseconds toward zero, as DuckDB reads a
# TIMESTAMP(NANOS, true) column), from floe's own text
ns_of() {
  python3 -c '
import json, sys, datetime
def ns(s):
    if s is None: return None
    s = s.rstrip("Z"); day, clock = s.split("T"); sec, frac = clock.split(".")
    dt = datetime.datetime.fromisoformat(day + "T" + sec)
    secs = (dt - datetime.datetime(1970, 1, 1)) // datetime.timedelta(seconds=1)
    return secs * 1000000000 + int(frac)
for l in open(sys.argv[1]):
    r = json.loads(l); t, z = ns(r["ts"]), ns(r["tz"])
    zu = None if z is None else (abs(z) // 1000) * (1 if z >= 0 else -1)
    print(json.dumps({"id": str(r["id"]), "ns": None if t is None else str(t),
                      "tzus": None if zu is None else str(zu)}, separators=(",", ":")))' "$1"
}
ns_of "$tmp/cat.ndjson" > "$tmp/want_ns.ndjson"
duck "SELECT id::VARCHAR AS id, epoch_ns(ts)::VARCHAR AS ns, epoch_us(tz)::VARCHAR AS tzus
      FROM read_parquet($(lit "$tmp/conv/part-00000.parquet"))" > "$tmp/duck_ns.ndjson" ||
  fail "DuckDB read"
diff "$tmp/want_ns.ndjson" "$tmp/duck_ns.ndjson" || fail "DuckDB reads other values"
# DuckDB as the writer (timestamp_ns only: DuckDB has no nanosecond type with zone; its
# text parser stops short of 1677-09-21, so that row is left out)
cat > "$tmp/schema_ts.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
 {"id":2,"name":"ts","required":false,"type":"timestamp_ns"}]}
JSON
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["ts"] is None or not r["ts"].startswith("1677"):  # DuckDB parses no further back
        print(json.dumps({"id": r["id"] + 100, "ts": r["ts"]}))' \
  "$tmp/cat.ndjson" > "$tmp/duck_in.ndjson"
node "$js/duckdb_copy.mjs" --schema "$tmp/schema_ts.json" "$tmp/duck_in.ndjson" \
  "$tmp/duck.parquet" || fail "DuckDB write"
"$floe" cat "$tmp/duck.parquet" | sed 's/,"tz":null//' > "$tmp/duck_cat.ndjson"
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); print(json.dumps({"id": r["id"], "ts": r["ts"]}, separators=(",", ":")))' \
  "$tmp/duck_in.ndjson" > "$tmp/duck_want.ndjson"
diff "$tmp/duck_want.ndjson" "$tmp/duck_cat.ndjson" || fail "floe reads DuckDB's TIMESTAMP_NS file otherwise"
echo "timestamp_ns: DuckDB agrees both ways"

# ---- 3. tables -------------------------------------------------------------------------
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
"$floe" namespace create ns > /dev/null
if "$floe" table create ns.v2 --schema "$tmp/schema.json" 2> "$tmp/v2.err"; then
  fail "a v2 table took timestamp_ns"
fi
grep -q 'timestamp_ns, which needs format version 3' "$tmp/v2.err" || fail "v2: $(cat "$tmp/v2.err")"
"$floe" table create ns.t --schema "$tmp/schema.json" --property format-version=3 \
  --property write.metadata.metrics.default=full \
  --partition 'day(ts), hour(tz), bucket(8, ts)' > /dev/null || fail "create v3"
"$floe" append ns.t "$tmp/in.ndjson" > "$tmp/append.txt" 2>&1 || fail "append: $(cat "$tmp/append.txt")"
grep -q '5 of 14 records rejected' "$tmp/append.txt" || fail "append: $(cat "$tmp/append.txt")"
"$floe" scan ns.t | sort > "$tmp/scan.ndjson" || fail "scan"
sort "$tmp/want.ndjson" | diff - "$tmp/scan.ndjson" || fail "scan differs from floe cat"
# partition values: id 7 is Appendix B's value, bucket = (hash & INT_MAX) % 8
b7=$(( (-1207196810 & 0x7fffffff) % 8 ))
"$floe" files ns.t > "$tmp/files.txt"
grep -q "ts_day=2017-11-16/tz_hour=2017-11-16-22/ts_bucket=$b7	" "$tmp/files.txt" ||
  fail "partition of id 7 (bucket $b7): $(cat "$tmp/files.txt")"
grep -q "ts_day=1969-12-31/tz_hour=1969-12-31-23/" "$tmp/files.txt" ||
  fail "partition of id 5 (-1 ns): $(cat "$tmp/files.txt")"
grep -q "ts_day=1677-09-21/tz_hour=2262-04-11-23/" "$tmp/files.txt" ||
  fail "partition of id 6: $(cat "$tmp/files.txt")"
"$floe" append ns.t "$tmp/duck.parquet" --split > /dev/null || fail "append DuckDB's file"
meta() { "$floe" table describe ns.t --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata_location"].removeprefix("file://"))'; }
node "$js/bounds_oracle.mjs" check --metadata "$(meta)" --mode full --min-files 10 > "$tmp/bounds.txt" ||
  fail "bounds: $(tail -3 "$tmp/bounds.txt")"
[ "$("$floe" scan ns.t | wc -l)" = 17 ] || fail "rows after the second append"
echo "timestamp_ns: tables ok ($(tail -1 "$tmp/bounds.txt"))"

# ---- 4. --where ------------------------------------------------------------------------
where() { "$floe" scan ns.t --where "$1" --columns id | sed 's/[^0-9]//g' | sort -n | tr '\n' ' '; }
[ "$(where "ts = '2026-10-06T14:00:00.123456789'")" = "1 4 101 104 " ] || fail "ts = 9 digits"
[ "$(where "ts = 1791295200123456790")" = "2 102 " ] || fail "ts = integer"
[ "$(where "ts > '2026-10-06T14:00:00.123456789'")" = "2 102 " ] || fail "ts > 9 digits"
[ "$(where "ts < '1970-01-01' and ts > '1969-12-31T23:59:59.999999998'")" = "5 105 " ] ||
  fail "ts around the epoch"
[ "$(where "tz = '2026-10-06T14:00:00.123456790+02:00'")" = "2 " ] || fail "tz with an offset"
[ "$(where "tz <= '1970-01-01T00:00:00.000000000Z' and tz > '1969-12-31T23:59:59.999999998Z'")" = "4 5 " ] ||
  fail "tz around the epoch"
# metrics: the file of day 2026-10-06 holds ...789 and ...790; a literal 1 ns above the
# maximum skips it
"$floe" scan ns.t --plan --where "ts >= '2026-10-06T14:00:00.123456791'" > "$tmp/plan.txt"
grep -q 'ts_day=2026-10-06' "$tmp/plan.txt" && fail "file kept: $(cat "$tmp/plan.txt")"
"$floe" scan ns.t --plan --where "ts >= '2026-10-06T14:00:00.123456790'" > "$tmp/plan.txt"
grep -q 'ts_day=2026-10-06' "$tmp/plan.txt" || fail "file skipped: $(cat "$tmp/plan.txt")"
for bad in "ts = '2026-10-06T14:00:00.1234567891'" "ts > '2262-04-12'" "tz < '1677-09-21T00:00:00Z'"; do
  rc=0
  "$floe" scan ns.t --where "$bad" > /dev/null 2> "$tmp/bad.err" || rc=$?
  [ "$rc" = 2 ] || fail "--where \"$bad\": exit $rc"
done
echo "timestamp_ns: --where ok"

# ---- 5. rewrite ------------------------------------------------------------------------
"$floe" table partition ns.t replace "bucket(2, id)" > /dev/null || fail "partition replace"
"$floe" scan ns.t | sort > "$tmp/before.ndjson"
"$floe" rewrite ns.t --option min-input-files=2 --option rewrite-all=true > "$tmp/rewrite.txt" ||
  fail "rewrite: $(cat "$tmp/rewrite.txt")"
grep -q '^rewrote 1[0-9] data files' "$tmp/rewrite.txt" || fail "rewrite: $(cat "$tmp/rewrite.txt")"
"$floe" scan ns.t | sort | diff "$tmp/before.ndjson" - || fail "scan after rewrite"
"$floe" scan ns.t --format canonical > /dev/null || fail "canonical scan"
files=$("$floe" files ns.t | cut -f1 | sed 's|^file://||; s/.*/'"'"'&'"'"'/' | paste -sd,)
duck "SELECT id::VARCHAR AS id, epoch_ns(ts)::VARCHAR AS ns FROM read_parquet([$files])
      WHERE id < 100 ORDER BY epoch_ns(ts), id" > "$tmp/duck_rw.ndjson" || fail "DuckDB read of the rewritten files"
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); print(json.dumps({"id": r["id"], "ns": r["ns"]}, separators=(",", ":")))' \
  "$tmp/want_ns.ndjson" | sort | diff - <(sort "$tmp/duck_rw.ndjson") || fail "DuckDB reads the rewritten files otherwise"
node "$js/bounds_oracle.mjs" check --metadata "$(meta)" --mode full --min-files 2 > "$tmp/bounds.txt" ||
  fail "bounds after rewrite: $(tail -3 "$tmp/bounds.txt")"
echo "timestamp_ns: rewrite ok"

# ---- 6. serve --------------------------------------------------------------------------
"$floe" table create ns.s --schema "$tmp/schema.json" --property format-version=3 \
  --partition 'day(ts)' > /dev/null || fail "create ns.s"
"$floe" serve --warehouse "$tmp/wh" --listen 127.0.0.1:0 --port-file "$tmp/port" \
  2> "$tmp/server.log" &
pid=$!
for _ in $(seq 400); do [ -s "$tmp/port" ] && break; sleep 0.05; done
[ -s "$tmp/port" ] || fail "serve did not start: $(cat "$tmp/server.log")"
port=$(cat "$tmp/port")
code=$(curl -s -o "$tmp/answer" -w '%{http_code}' -XPOST \
  "http://127.0.0.1:$port/v1/tables/ns.s/events" -H 'Content-Type: application/x-ndjson' \
  --data-binary "@$tmp/in.ndjson")
[ "$code" = 200 ] || fail "POST: $code $(cat "$tmp/answer")"
code=$(curl -s -o "$tmp/flush" -w '%{http_code}' -XPOST \
  "http://127.0.0.1:$port/v1/admin/flush?wait=true&timeout=120")
[ "$code" = 200 ] && grep -q '"complete":true' "$tmp/flush" || fail "flush: $code $(cat "$tmp/flush")"
kill -TERM "$pid"
wait "$pid" || fail "serve exit status $?"
pid=
"$floe" scan ns.s | sort | diff <(sort "$tmp/want.ndjson") - || fail "serve: rows differ"
find "$tmp/wh" -path '*quarantine*' -name '*.ndjson' -exec cat {} + > "$tmp/sq.ndjson"
for id in 8 9 11; do
  grep "\\\\\"id\\\\\":$id," "$tmp/sq.ndjson" | grep -q 'outside the nanosecond timestamp range' ||
    fail "serve: id $id not quarantined as out of range: $(cat "$tmp/sq.ndjson")"
done
echo "timestamp_ns: ok"
