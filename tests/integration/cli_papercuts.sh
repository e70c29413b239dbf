#!/usr/bin/env bash
# cli_papercuts.sh - issue 24's CLI papercuts, each asserted on the command's outcome:
#  - a bad --where (syntax, unknown column, a literal that does not fit) is a usage error
#    (exit 2, one line on stderr; {"error":{"code":"USAGE",...}} under --json) in every
#    command that takes --where: scan, cat, rewrite; an unknown option is one line too;
#  - floe scan --as-of before the oldest snapshot names the time as typed and the oldest
#    snapshot's time; the README's --as-of example reads the current snapshot;
#  - floe append names the quarantine file holding the records it rejected (text, JSON).
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "cli_papercuts: FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
cd "$tmp"

echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"v","required":false,"type":"long"}]}' > s.json
"$floe" namespace create ns >/dev/null
"$floe" table create ns.t --schema s.json >/dev/null
printf '{"k":"a","v":1}\n{"k":"b","v":2}\n' > in1.ndjson
"$floe" append ns.t in1.ndjson >/dev/null

# expect_usage NAME CMD...: exit 2 with exactly one line on stderr naming the command
expect_usage() {
  local what=$1 rc=0
  shift
  "$floe" "$@" >out.txt 2>err.txt || rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, want 2 ($(cat err.txt))"
  [ "$(wc -l < err.txt)" = 1 ] || fail "$what: stderr is not one line: $(cat err.txt)"
  grep -q "^floe $2: " err.txt || grep -q "^floe $1: " err.txt || fail "$what: $(cat err.txt)"
}

# -- a bad --where is a usage error ------------------------------------------------------
data=$(find wh -name '*.parquet' | head -1)
for w in "nope = 1" "v = " "v = 'abc'" "k = 'a' AND" "v IN (1, 'x')"; do
  expect_usage "scan --where \"$w\"" scan ns.t --where "$w"
  expect_usage "cat --where \"$w\"" cat "$data" --where "$w"
  expect_usage "rewrite --where \"$w\"" rewrite ns.t --where "$w"
  expect_usage "rewrite --dry-run --where \"$w\"" rewrite ns.t --where "$w" --dry-run
done
grep -q "no column nope" <("$floe" scan ns.t --where "nope = 1" 2>&1) || fail "scan: the unknown column is not named"
# under --json the error is also JSON on stdout, and nothing else is
rc=0
"$floe" scan ns.t --where "v = 'abc'" --json >out.txt 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "scan --json bad --where: exit $rc"
python3 -c "import json,sys
e=json.load(open(sys.argv[1]))['error']
assert e['code']=='USAGE' and e['exit']==2 and 'abc' in e['message'], e" out.txt ||
  fail "scan --json bad --where: $(cat out.txt)"
# a good filter still reads (and a time-travel read checks it against that snapshot)
[ "$("$floe" scan ns.t --where "v = 2")" = '{"k":"b","v":2}' ] || fail "scan --where v = 2"
[ "$("$floe" cat "$data" --where "v = 2")" = '{"k":"b","v":2}' ] || fail "cat --where v = 2"

# -- --as-of names the time typed and the oldest snapshot's ---------------------------------
rc=0
"$floe" scan ns.t --as-of 2001-01-01 >out.txt 2>err.txt || rc=$?
[ $rc = 1 ] || fail "scan --as-of before the first snapshot: exit $rc"
oldest=$("$floe" snapshots ns.t --json | python3 -c 'import json,sys,datetime
t=min(s["timestamp_ms"] for s in json.load(sys.stdin))
print(datetime.datetime.fromtimestamp(t/1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")+"%03dZ" % (t%1000))')
grep -q "^floe: --as-of 2001-01-01: no snapshot was current at 2001-01-01T00:00:00.000Z: the oldest one is from $oldest\$" err.txt ||
  fail "scan --as-of message: $(cat err.txt) (oldest $oldest)"
"$floe" scan ns.t --as-of 978307200000 --json >out.txt 2>/dev/null || true
grep -q '"message":"--as-of 978307200000: ' out.txt || fail "scan --as-of --json: $(cat out.txt)"
# the README's example: the snapshot current now
readme_as_of=$(grep -o 'floe scan demo.events --as-of "[^"]*"' "$src/README.md" | sed 's/.*--as-of //')
[ -n "$readme_as_of" ] || fail "no --as-of example in the README"
when=$(eval "echo $readme_as_of")
[ "$("$floe" scan ns.t --as-of "$when" | wc -l)" = 2 ] || fail "the README's --as-of ($when) does not read the table"

# -- floe append names the quarantine ---------------------------------------------------------
printf '{"k":"c","v":3}\n{"k":"d","v":"not a long"}\n' > bad.ndjson
"$floe" append ns.t bad.ndjson > out.txt
q=$(sed -n 's/^1 of 2 records rejected: they are in file:\/\/\(.*\)$/\1/p' out.txt)
[ -n "$q" ] && grep -q 'not a long' "$q" || fail "append text: no quarantine named: $(cat out.txt)"
"$floe" append ns.t bad.ndjson --quarantine "$tmp/q.ndjson" --json > out.txt
python3 -c "import json,sys
r=json.load(open(sys.argv[1]))
assert r['rejected']==1 and r['quarantine']==sys.argv[2], r" out.txt "$tmp/q.ndjson" ||
  fail "append --json quarantine: $(cat out.txt)"
grep -q 'not a long' q.ndjson || fail "append --quarantine: not in $tmp/q.ndjson"
"$floe" append ns.t in1.ndjson --json | grep -q '"quarantine":null' || fail "append without rejections: quarantine not null"

# -- an unknown option is one line in every command ------------------------------------
for c in gen convert schema inspect cat catalog table namespace append scan snapshots ref \
         history files rewrite health expire orphans rewrite-manifests maintain serve work; do
  expect_usage "$c --bogus" "$c" --bogus
done

[ $fails = 0 ] || exit 1
echo "cli_papercuts: ok"
