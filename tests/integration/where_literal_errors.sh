#!/usr/bin/env bash
# where_literal_errors.sh - a --where literal that does not fit its column is refused with
# the literal, the column, the column's full type and the form expected (issue 23,
# adversary r6: a bad timestamp literal was told "expected a date YYYY-MM-DD", and most
# types said nothing of the form they take). A usage error (exit 2) in floe scan and
# floe delete alike.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "where_literal_errors: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
"$floe" namespace create ns > /dev/null
cat > "$tmp/s.json" <<'JSON'
{"type":"struct","fields":[{"id":1,"name":"i","required":false,"type":"int"},
 {"id":2,"name":"dec","required":false,"type":"decimal(5,2)"},
 {"id":3,"name":"u","required":false,"type":"uuid"},
 {"id":4,"name":"tz","required":false,"type":"timestamptz"},
 {"id":5,"name":"b","required":false,"type":"boolean"},
 {"id":6,"name":"s","required":false,"type":"string"},
 {"id":7,"name":"tn","required":false,"type":"timestamp_ns"},
 {"id":8,"name":"fx","required":false,"type":"fixed[4]"},
 {"id":9,"name":"l","required":false,"type":"long"}]}
JSON
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 > /dev/null
echo '{"i":1}' > "$tmp/a.ndjson"
"$floe" append ns.t "$tmp/a.ndjson" > /dev/null
refused() { # refused WHERE MESSAGE
  local rc=0
  "$floe" scan ns.t --where "$1" > /dev/null 2> "$tmp/err" || rc=$?
  [ $rc = 2 ] || fail "scan --where \"$1\": exit $rc, want 2: $(cat "$tmp/err")"
  grep -qF -- "$2" "$tmp/err" || fail "scan --where \"$1\": $(cat "$tmp/err"), want: $2"
  rc=0
  "$floe" delete ns.t --where "$1" > /dev/null 2> "$tmp/err" || rc=$?
  [ $rc = 2 ] || fail "delete --where \"$1\": exit $rc, want 2: $(cat "$tmp/err")"
  grep -qF -- "$2" "$tmp/err" || fail "delete --where \"$1\": $(cat "$tmp/err"), want: $2"
}
refused "i = 'x'" 'value "x" does not fit column i (int): expected an integer from -2147483648 to 2147483647'
refused "i = 3000000000" 'value 3000000000 does not fit column i (int): expected an integer'
refused "l = 1.5" 'value 1.5 does not fit column l (long): expected an integer from -9223372036854775808'
refused "dec = 'x'" 'value "x" does not fit column dec (decimal(5, 2)): expected a decimal number'
refused "u = 'zz'" 'value "zz" does not fit column u (uuid): expected a UUID'
refused "tz = 'x'" "value \"x\" does not fit column tz (timestamptz): expected a timestamp 'YYYY-MM-DD[THH:MM:SS[.ffffff]][Z|+HH:MM]'"
refused "tn = 'soon'" "value \"soon\" does not fit column tn (timestamp_ns): expected a timestamp 'YYYY-MM-DD[THH:MM:SS[.fffffffff]]'"
refused "b = 1" 'value 1 does not fit column b (boolean): expected true or false'
refused "s = 5" "value 5 does not fit column s (string): expected a quoted string, 'text'"
refused "fx = 'abc'" 'value "abc" does not fit column fx (fixed[4]): expected 4 bytes as 8 hex digits'
refused "i IN (1, 'z')" 'value "z" does not fit column i (int)'
[ "$("$floe" scan ns.t | wc -l)" = 1 ] || fail "rows"
echo "where_literal_errors: ok"
