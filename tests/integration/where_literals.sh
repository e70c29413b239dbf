#!/usr/bin/env bash
# where_literals.sh - floe scan --where and floe cat --where take the same literals for
# date, time, timestamp and decimal columns (one literal module types both; README
# lists the forms), and each picks the same rows with them: for every literal below, the
# table scan and floe cat on the table's data file either both refuse it or both accept
# it with the same count of matching rows; the accepted and refused lists are the
# documented forms and their boundaries.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "where_literals: FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98

cat > "$tmp/s.json" <<'J'
{"type":"struct","fields":[
 {"id":1,"name":"d","required":false,"type":"date"},
 {"id":2,"name":"tm","required":false,"type":"time"},
 {"id":3,"name":"ts","required":false,"type":"timestamp"},
 {"id":4,"name":"tz","required":false,"type":"timestamptz"},
 {"id":5,"name":"tn","required":false,"type":"timestamp_ns"},
 {"id":6,"name":"dec","required":false,"type":"decimal(9, 2)"}]}
J
: > "$tmp/rows.ndjson"
for i in 0 1 2 3 4 5 6 7 8 9; do
  printf '{"d":"2024-02-2%d","tm":"1%d:30:15.5","ts":"2024-03-01T0%d:00:00","tz":"2024-03-01T0%d:00:00Z","tn":"2024-03-01T0%d:00:00.00000000%d","dec":"1%d.34"}\n' \
    "$i" "$i" "$i" "$i" "$i" "$i" "$i" >> "$tmp/rows.ndjson"
done
sed -i 's/"dec":"\([0-9.]*\)"/"dec":\1/' "$tmp/rows.ndjson"
"$floe" namespace create ns >/dev/null
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 >/dev/null # timestamp_ns: v3
"$floe" append ns.t "$tmp/rows.ndjson" >/dev/null
file=$(find "$tmp/wh" -name '*.parquet' | head -1)
[ -n "$file" ] || { echo "where_literals: FAIL: no data file"; exit 1; }

# try COLUMN LITERAL WANT [ROWS]: WANT is ok (both accept, same rows: ROWS when given) or
# no (both refuse)
try() {
  local where="$1 >= $2" sn cn src_rc=0 cat_rc=0
  "$floe" scan ns.t --where "$where" --format canonical > "$tmp/scan.out" 2> "$tmp/scan.err" ||
    src_rc=$?
  "$floe" cat "$file" --where "$where" > "$tmp/cat.out" 2> "$tmp/cat.err" || cat_rc=$?
  sn=$(wc -l < "$tmp/scan.out")
  cn=$(wc -l < "$tmp/cat.out")
  [ $src_rc -lt 90 ] && [ $cat_rc -lt 90 ] || fail "$where: sanitizer exit ($src_rc, $cat_rc)"
  if [ $src_rc -eq 0 ] && [ $cat_rc -eq 0 ]; then
    [ "$sn" = "$cn" ] || fail "$where: scan matches $sn rows, cat $cn"
    [ -z "${4:-}" ] || [ "$sn" = "$4" ] || fail "$where: $sn rows, want $4"
    [ "$3" = ok ] || fail "$where: accepted by both, documented as refused"
  elif [ $src_rc -ne 0 ] && [ $cat_rc -ne 0 ]; then
    [ "$3" = no ] || fail "$where: refused by both: $(head -1 "$tmp/scan.err") / $(head -1 "$tmp/cat.err")"
    # a literal that does not fit is the caller's mistake: a usage error in both
    [ $src_rc = 2 ] && [ $cat_rc = 2 ] || fail "$where: refused with exit $src_rc / $cat_rc, want 2"
  else
    fail "$where: scan exit $src_rc, cat exit $cat_rc: $(head -1 "$tmp/scan.err") $(head -1 "$tmp/cat.err")"
  fi
}

for l in "'2024-02-25'" 2024-02-25 19778 -5 "'+10000-01-01'" "'5-01-01'" "'-0044-03-15'" \
         "'2024-02-29'"; do try d "$l" ok; done
for l in "'2024-02-30'" "'2023-02-29'" "'2024-13-01'" "'2024-00-01'" "'19778'" "'x'" 1e3 \
         2147483648 "'2024-2-25'" "'2024-02-25T00:00'" "'1000000000-01-01'"; do try d "$l" no; done

for l in "'13:30'" "'13:30:15'" "'13:30:15.5'" "'13:30:15.123456789'" 13:30 48615500000; do
  try tm "$l" ok; done
for l in "'24:00'" "'13:60'" "'13:30:60'" "'13:30:15.1234567890'" "'13'" "'48615500000'" \
         "'1:30'" "'13:30:15.'"; do try tm "$l" no; done

# timestamp literals: a zone (Z or an offset) is applied on the timestamptz column and
# refused on the timestamp columns without zone (wall-clock values, as ingest takes them)
zoned=("'2024-03-01T05:00:00Z'" "'2024-03-01T07:00:00+02:00'" "'2024-03-01T07:00:00+0200'"
       "'2024-03-01T07:00:00+02'" "'2024-03-01T00:00:00-05:00'" "'2024-03-01T23:00:00+18:00'"
       "'2024-03-01Z'" "'2024-03-01T05:00:00-00:00'")
for c in ts tz tn; do
  for l in "'2024-03-01T05:00:00'" "'2024-03-01 05:00:00'" "'2024-03-01t05:00'" "'2024-03-01'" \
           2024-03-01T05:00:00 "'2024-03-01T05:00:00.5'" \
           "'2024-03-01T05:00:00.000000005'" 1709269200000000; do try $c "$l" ok; done
  for l in "${zoned[@]}"; do
    if [ $c = tz ]; then try $c "$l" ok; else try $c "$l" no; fi
  done
  for l in "'2024-03-01T05:00:00+19:00'" "'2024-03-01T05:00:00+18:01'" "'2024-02-30T00:00:00'" \
           "'2024-03-01T24:00:00'" "'2024-03-01T05:00:60'" "'2024-03-01T05:00:00+05:'" \
           "'2024-03-01T05:00:00.1234567890'" "'2024-03-01T05'" "'yesterday'" "'1709269200000000'" \
           "'2024-03-01T05:00:00 Z'" "'2024-03-01T05:00:00+5'"; do try $c "$l" no; done
done
"$floe" scan ns.t --where "ts >= '2024-03-01T07:00:00+02:00'" > /dev/null 2> "$tmp/err" &&
  fail "a zone on a timestamp column was accepted"
grep -q "without time zone" "$tmp/err" || fail "refusal does not say why: $(cat "$tmp/err")"
try tn "'2262-04-11T23:47:16.854775807'" ok
try tn "'2262-04-11T23:47:16.854775808'" no
try ts "'2262-04-11T23:47:16.854775808'" ok

for l in 12.34 "'12.34'" 12.3400 1.234e1 1234E-2 -0.5 .5 12. +1 99999999999 "'15'" \
         999999999999999999999999999999999999.99; do try dec "$l" ok; done
for l in 12.345 1e-3 abc 1e 1.2.3 "'1,5'" 9999999999999999999999999999999999999.99 \
         1e1234567 .; do try dec "$l" no; done

# the rows matched (10 rows, i = 0..9: d 2024-02-2i, tm 1i:30:15.5, ts/tz 2024-03-01 0i:00,
# tn 0i:00:00.00000000i, dec 1i.34)
try d "'2024-02-25'" ok 5
try d 19783 ok 0
try tm "'13:30:15.5'" ok 7
try ts "'2024-03-01T05:00:00'" ok 5
try tz "'2024-03-01 00:00:00-05:00'" ok 5
try tn "'2024-03-01T05:00:00.000000005'" ok 5
try tn "'2024-03-01T05:00:00.000000006'" ok 4
try dec 12.34 ok 8
try dec "'1.234e1'" ok 8

[ $fails -eq 0 ] || { echo "where_literals: $fails failures" >&2; exit 1; }
echo "where_literals: ok"
