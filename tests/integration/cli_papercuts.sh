#!/usr/bin/env bash
# cli_papercuts.sh - issue 24's CLI papercuts, each asserted on the command's outcome:
#  - a bad --where (syntax, unknown column, a literal that does not fit) is a usage error
#    (exit 2, one line on stderr; {"error":{"code":"USAGE",...}} under --json) in every
#    command that takes --where: scan, cat, rewrite; an unknown option is one line too;
#  - floe scan --as-of before the oldest snapshot names the time as typed and the oldest
#    snapshot's time; the README's --as-of example reads the current snapshot;
#  - floe append names the quarantine file holding the records it rejected (text, JSON);
#  - floe maintain's schedule is --schedule; --config is the catalog configuration as in
#    every command, and a schedule given as --config (its old meaning) is refused, naming
#    --schedule; each run says what it did (snapshots expired, in text and JSON);
#  - floe catalog's namespace and table actions are floe namespace's and floe table's:
#    the old spellings are refused naming the new one; floe namespace create/list/drop;
#  - under --json every command prints a failure as {"error":{"code","exit","message"}}
#    on stdout (one line, nothing else there).
# (The table, snapshots and ref papercuts: cli_papercuts_table.sh.)
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
# a second --where is refused, not taken in place of the first (a delete of the wrong rows)
for c in scan rewrite delete; do
  expect_usage "$c --where twice" $c ns.t --where "k = 'a'" --where "k = 'b'"
done
expect_usage "cat --where twice" cat "$data" --where "k = 'a'" --where "k = 'b'"
# under --json the error is also JSON on stdout, and nothing else is
rc=0
"$floe" scan ns.t --where "v = 'abc'" --plan --json >out.txt 2>/dev/null || rc=$?
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
"$floe" scan ns.t --as-of 978307200000 --plan --json >out.txt 2>/dev/null || true
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

# -- floe maintain --schedule ------------------------------------------------------------------
printf '[defaults]\nexpire.older-than = 0s\nexpire.retain-last = 1\nrewrite-data.enabled = false\n' > sched.ini
expect_usage "maintain --config SCHEDULE" maintain ns.t --once --config sched.ini
grep -q -- "--schedule sched.ini" err.txt || fail "maintain --config SCHEDULE: $(cat err.txt)"
expect_usage "maintain --catalog-config" maintain ns.t --once --catalog-config x.conf
grep -q -- "--config FILE" err.txt || fail "maintain --catalog-config: $(cat err.txt)"
printf '[catalog.test]\nuri = %s\nwarehouse = %s\n' "$FLOE_CATALOG_URI" "$FLOE_WAREHOUSE" > cat.conf
"$floe" maintain ns.t --once --schedule sched.ini --config cat.conf > out.txt ||
  fail "maintain --schedule --config: $(cat out.txt)"
grep -Eq '^ns\.t +expire +ok +[1-9][0-9]* snapshots expired' out.txt ||
  fail "maintain text does not say what expire did: $(cat out.txt)"
"$floe" append ns.t in1.ndjson >/dev/null
"$floe" maintain ns.t --once --schedule sched.ini --json > out.txt
python3 -c "import json,sys
runs={r['job']: r for r in map(json.loads, open(sys.argv[1]))}
assert runs['expire']['snapshots_expired']==1 and runs['expire']['result']=='ok', runs['expire']
assert 'files_deleted' in runs['orphans'] and 'orphans deleted' in runs['orphans']['detail'], runs['orphans']
assert 'manifests' in runs['rewrite-manifests']['detail'], runs['rewrite-manifests']" out.txt ||
  fail "maintain --json: $(cat out.txt)"

# -- floe catalog keeps show, locate, serve -----------------------------------------------------
for old in "namespaces" "create-namespace x" "drop-namespace x" "tables ns" "table ns t" "drop-table ns t"; do
  # shellcheck disable=SC2086
  expect_usage "catalog $old" catalog $old
  grep -q "is now floe \(namespace\|table\) " err.txt || fail "catalog $old: $(cat err.txt)"
done
[ "$("$floe" namespace create ns3 --property owner=me --json)" = '{"namespace":"ns3","created":true}' ] ||
  fail "namespace create --json"
"$floe" namespace create ns4 a=b
[ "$("$floe" namespace list)" = "$(printf 'ns\nns3\nns4')" ] || fail "namespace list: $("$floe" namespace list)"
[ "$("$floe" namespace list --json)" = '["ns","ns3","ns4"]' ] || fail "namespace list --json"
[ "$("$floe" namespace properties ns3)" = 'owner = me' ] || fail "namespace create --property"
[ "$("$floe" namespace properties ns4)" = 'a = b' ] || fail "namespace create K=V"
[ "$("$floe" namespace drop ns3 --json)" = '{"namespace":"ns3","dropped":true}' ] || fail "namespace drop --json"
"$floe" namespace drop ns4
[ "$("$floe" table list ns)" = ns.t ] || fail "table list ns: $("$floe" table list ns)"
"$floe" catalog show | grep -q '^type: *sql' || fail "catalog show: $("$floe" catalog show)"
expect_usage "namespace create without NS" namespace create

# -- --json failures are JSON on stdout ---------------------------------------------------------
for c in "scan ns.nope --plan" "append ns.nope in1.ndjson" "snapshots ns.nope" "files ns.nope" \
         "history ns.nope" "ref list ns.nope" "rewrite ns.nope" "expire ns.nope" \
         "orphans ns.nope" "rewrite-manifests ns.nope" "health ns.nope" "table describe ns.nope" \
         "table drop ns.nope" "namespace drop nope" "schema show ns.nope" \
         "catalog locate /nope" "inspect /nope.parquet" "convert --schema s.json /nope.ndjson -o o" \
         "maintain ns.nope --once"; do
  rc=0
  # shellcheck disable=SC2086
  "$floe" $c --json >out.txt 2>/dev/null || rc=$?
  [ $rc = 1 ] || fail "$c --json: exit $rc"
  python3 -c "import json,sys
lines=open(sys.argv[1]).read().splitlines()
assert len(lines)==1, lines
e=json.loads(lines[0])['error']
assert e['code']=='NOTFOUND' and e['exit']==1 and e['message'], e" out.txt || fail "$c --json: $(cat out.txt)"
done

# -- an unknown option is one line in every command ------------------------------------
for c in gen convert schema inspect cat catalog table namespace append scan snapshots ref \
         history files rewrite health expire orphans rewrite-manifests maintain serve work; do
  expect_usage "$c --bogus" "$c" --bogus
done

[ $fails = 0 ] || exit 1
echo "cli_papercuts: ok"
