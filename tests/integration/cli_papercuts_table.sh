#!/usr/bin/env bash
# cli_papercuts_table.sh - issue 24's CLI papercuts of floe table, snapshots, ref and
# maintain, each asserted on the command's outcome (the others: cli_papercuts.sh):
#  - a --partition, --sort, partition add-field / replace or sort-order set that does not
#    parse against the schema is a usage error naming the text, nothing committed; every
#    floe table, snapshots and ref action refuses an unknown option (exit 2, one line);
#  - set-identifier-fields without a PATH clears them (`none` is a column name like any);
#  - floe ref list lines up names by display columns (multibyte and wide characters),
#    without trailing spaces; snapshots set-current/cherrypick take negative snapshot ids;
#  - JSON results carry user strings escaped (table upgrade, rename, drop);
#  - floe maintain --once --json ends in {"error":...} when a run failed.
name=cli_papercuts_table oracle=
source "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
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

# -- a bad partition spec or sort order is a usage error naming it ----------------------
expect_bad_text() { # WHAT TEXT CMD...: a usage error naming TEXT
  local what=$1 text=$2
  shift 2
  expect_usage "$what" "$@"
  grep -qF -- "\"$text\"" err.txt || fail "$what: the text is not named: $(cat err.txt)"
}
before=$(meta ns.t)
expect_bad_text "create --partition bucket(x, k)" "bucket(x, k)" table create ns.u --schema s.json --partition "bucket(x, k)"
expect_bad_text "create --partition nope" "nope" table create ns.u --schema s.json --partition "nope"
expect_bad_text "create --partition day(k)" "day(k)" table create ns.u --schema s.json --partition "day(k)"
expect_bad_text "create --sort" "k SIDEWAYS" table create ns.u --schema s.json --sort "k SIDEWAYS"
expect_bad_text "create --sort nope" "nope DESC" table create ns.u --schema s.json --partition k --sort "nope DESC"
"$floe" table describe ns.u >/dev/null 2>&1 && fail "a refused table create made ns.u"
expect_bad_text "partition add-field" "frob(k)" table partition ns.t add-field "frob(k)"
expect_bad_text "partition add-field nope" "nope" table partition ns.t add-field "nope"
expect_bad_text "partition replace" "k, bucket(k)" table partition ns.t replace "k, bucket(k)"
expect_bad_text "sort-order set" "k UP" table sort-order ns.t set "k UP"
expect_bad_text "sort-order set nope" "nope" table sort-order ns.t set "nope"
[ "$(meta ns.t)" = "$before" ] || fail "a refused partition or sort order change committed"
rc=0
"$floe" table partition ns.t add-field "frob(k)" --json >out.txt 2>/dev/null || rc=$?
python3 -c "import json,sys
e=json.load(open(sys.argv[1]))['error']
assert e['code']=='USAGE' and e['exit']==2 and 'frob(k)' in e['message'], e" out.txt ||
  fail "partition add-field --json: exit $rc, $(cat out.txt)"
# what parses still commits
"$floe" table partition ns.t add-field "bucket(4, k)" >/dev/null || fail "partition add-field bucket(4, k)"
"$floe" table sort-order ns.t set "v DESC" >/dev/null || fail "sort-order set v DESC"

# -- every floe table / snapshots / ref action refuses an unknown option -------------------
sid=$("$floe" snapshots ns.t --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["snapshot_id"])')
"$floe" ref create ns.t audit >/dev/null
while IFS= read -r c; do
  [ -n "$c" ] || continue
  # shellcheck disable=SC2086
  expect_usage "$c --bogus" $c --bogus
  grep -q -- "--bogus" err.txt || fail "$c --bogus: the option is not named: $(cat err.txt)"
done <<CMDS
table create ns.u --schema s.json
table list
table list ns
table describe ns.t
table properties ns.t
table properties ns.t set a=b
table properties ns.t unset a
table sort-order ns.t
table sort-order ns.t set k
table sort-order ns.t clear
table schema ns.t
table schema ns.t add-column z long
table schema ns.t rename-column k kk
table schema ns.t drop-column v
table schema ns.t widen v long
table schema ns.t make-optional v
table schema ns.t move-column v first
table schema ns.t set-identifier-fields
table partition ns.t
table partition ns.t add-field v
table partition ns.t drop-field k
table partition ns.t replace k
table register ns.u $tmp/nope.metadata.json
table rename ns.t ns.t2
table drop ns.t
table upgrade ns.t
snapshots ns.t
snapshots rollback ns.t --to $sid
snapshots set-current ns.t $sid
snapshots cherrypick ns.t $sid
ref list ns.t
ref create ns.t r2
ref replace ns.t audit
ref drop ns.t audit
ref fast-forward ns.t audit main
history ns.t
files ns.t
CMDS
# before the table too, and --purge / --format-version outside drop / upgrade
expect_usage "table describe --bogus ns.t" table describe --bogus ns.t
expect_usage "table schema --bogus ns.t" table schema --bogus ns.t
expect_usage "table list --purge" table list --purge
expect_usage "table describe --format-version 2" table describe ns.t --format-version 2
"$floe" table describe ns.t >/dev/null || fail "the table went away in the option audit"

# -- set-identifier-fields: no PATH clears them ---------------------------------------------
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"}]}' > r.json
"$floe" table create ns.r --schema r.json >/dev/null
ids() { "$floe" table schema ns.r --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["schema"].get("identifier-field-ids", []))'; }
"$floe" table schema ns.r set-identifier-fields id >/dev/null
[ "$(ids)" = "[1]" ] || fail "set-identifier-fields id: $(ids)"
rc=0
"$floe" table schema ns.r set-identifier-fields none >/dev/null 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q "none" err.txt || fail "set-identifier-fields none: exit $rc, $(cat err.txt)"
[ "$(ids)" = "[1]" ] || fail "set-identifier-fields none changed them: $(ids)"
"$floe" table schema ns.r set-identifier-fields >/dev/null || fail "set-identifier-fields (clear)"
[ "$(ids)" = "[]" ] || fail "set-identifier-fields without PATH: $(ids)"
"$floe" table --help > out.txt
grep -q "without a PATH: *$" out.txt || fail "table --help does not say how to clear"
grep -q 'set-identifier-fields event_id .*# no PATH: clear them' "$src/README.md" ||
  fail "the README does not say how to clear identifier fields"

# -- floe ref list pads by display columns --------------------------------------------------
echo '{"id":1}' > r.ndjson
"$floe" append ns.r r.ndjson >/dev/null
for r in ünïcödé 日本語タグ plain; do "$floe" ref create ns.r "$r" >/dev/null; done
"$floe" ref list ns.r > out.txt
python3 -c "import sys,unicodedata
w=lambda s: sum(2 if unicodedata.east_asian_width(c) in 'WF' else 1 for c in s)
lines=open(sys.argv[1], encoding='utf-8').read().splitlines()
cols={w(l[:l.index(' branch') if ' branch' in l else l.index(' tag')]) for l in lines[1:]}
assert len(lines)==5 and cols=={20}, (cols, lines)" out.txt || fail "ref list columns: $(cat out.txt)"
! grep -q ' $' out.txt || fail "ref list: lines end in spaces: $(cat -A out.txt)"
# a negative snapshot id is the snapshot, not an option: the table says it has none such
for act in set-current cherrypick; do
  set +e
  "$floe" snapshots $act ns.r -5 2> err.txt; rc=$?
  set -e
  [ $rc = 1 ] && grep -q 'snapshot -5' err.txt || fail "snapshots $act ns.r -5: exit $rc, $(cat err.txt)"
done

# -- JSON results escape user strings -------------------------------------------------------
"$floe" namespace create 'q"n' >/dev/null
"$floe" table create 'q"n.t"x' --schema s.json >/dev/null
"$floe" table upgrade 'q"n.t"x' --json > out.txt
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['table']=='q\"n.t\"x', d" out.txt ||
  fail "table upgrade --json: $(cat out.txt)"
"$floe" table rename 'q"n.t"x' 'u"v' --json > out.txt
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d=={'renamed':'q\"n.t\"x','to':'q\"n.u\"v'}, d" out.txt ||
  fail "table rename --json: $(cat out.txt)"
"$floe" table drop 'q"n.u"v' --json > out.txt
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d=={'dropped':'q\"n.u\"v','files_deleted':0}, d" out.txt ||
  fail "table drop --json: $(cat out.txt)"

# -- floe maintain --once --json: a failed run ends in the error line ---------------------------
"$floe" table create ns.m --schema s.json >/dev/null
"$floe" append ns.m in1.ndjson >/dev/null
find wh/ns/m/metadata -name '*.metadata.json' -delete
rc=0
"$floe" maintain ns.m --once --json >out.txt 2>err.txt || rc=$?
[ $rc = 1 ] || fail "maintain with failing runs: exit $rc"
python3 -c "import json,sys
lines=[json.loads(l) for l in open(sys.argv[1])]
runs, last = lines[:-1], lines[-1]
failed=[r for r in runs if r['result']=='failed']
assert failed and all('error' not in r for r in runs), lines
e=last['error']
assert e['exit']==1 and e['code']!='USAGE' and ('%d of %d maintenance runs failed' % (len(failed), len(runs))) in e['message'], e
assert e['message'].endswith(failed[0]['detail']) and 'ns.m ' + failed[0]['job'] in e['message'], e" out.txt ||
  fail "maintain --once --json failure: $(cat out.txt)"
grep -q "maintenance runs failed" err.txt || fail "maintain: no error line on stderr: $(cat err.txt)"

# -- a compression level the codec cannot take is refused where it is given -------------
# (it was stored, and every later append failed with "row group 0: zstd: level ...")
"$floe" table create ns.lv --schema s.json >/dev/null
expect_usage "properties set level 99 (zstd)" table properties ns.lv set write.parquet.compression-level=99
grep -q "write.parquet.compression-codec=zstd and write.parquet.compression-level=99: zstd: level 99 out of range" err.txt ||
  fail "level 99: $(cat err.txt)"
"$floe" table properties ns.lv set write.parquet.compression-codec=gzip write.parquet.compression-level=9 >/dev/null ||
  fail "gzip level 9 refused"
expect_usage "gzip level 10" table properties ns.lv set write.parquet.compression-level=10
"$floe" table properties ns.lv set write.parquet.compression-level=22 write.parquet.compression-codec=zstd >/dev/null ||
  fail "zstd level 22 refused"
expect_usage "codec changed under level 22" table properties ns.lv set write.parquet.compression-codec=gzip
[ "$("$floe" table properties ns.lv --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["write.parquet.compression-codec"], d["write.parquet.compression-level"])')" = "zstd 22" ] ||
  fail "properties after the refusals: $("$floe" table properties ns.lv)"
"$floe" append ns.lv in1.ndjson >/dev/null || fail "append at zstd 22"
expect_usage "create with level 30" table create ns.lv2 --schema s.json --property write.parquet.compression-level=30
expect_usage "convert gzip level 15" convert --schema s.json -o lvout -c gzip --compression-level 15 in1.ndjson
grep -q "gzip: level 15 out of range 1..9" err.txt || fail "convert gzip 15: $(cat err.txt)"

# -- names and values holding control characters are shown escaped in text output -------
# (a column, property or ref named with ESC sequences drove the terminal of whoever ran
# floe table describe on the table)
python3 -c '
import json
print(json.dumps({"type": "struct", "fields": [
    {"id": 1, "name": "a\u001b[31mRED\u001b[0m", "type": "long", "required": False, "doc": "d\u001b[2J"},
    {"id": 2, "name": "b\rX", "type": "string", "required": False}]}))' > esc.json
"$floe" table create ns.esc --schema esc.json >/dev/null
"$floe" append ns.esc <(printf '{"b\\rX":"v"}\n') >/dev/null 2>&1 || true
"$floe" table properties ns.esc set "$(printf 'k\033]0;t\007')=$(printf 'v\rZ')" > esc_set.txt
"$floe" ref create ns.esc "$(printf 'r\033[2J')" >/dev/null 2>&1 || true
for what in "table schema ns.esc" "table describe ns.esc" "table properties ns.esc" "ref list ns.esc"; do
  $floe $what > esc_out.txt 2>&1 || true
  if LC_ALL=C grep -q "$(printf '[\033\r\007]')" esc_out.txt esc_set.txt; then
    fail "$what prints raw control characters: $(od -c esc_out.txt | head -5)"
  fi
done
"$floe" append ns.t in1.ndjson --summary "added-note=$(printf 'n\033[2J')" >/dev/null
"$floe" history ns.t > esc_out.txt
if LC_ALL=C grep -q "$(printf '\033')" esc_out.txt; then fail "history prints raw control characters"; fi
grep -qF 'added-note=n\x1b[2J' esc_out.txt || fail "history: $(tail -1 esc_out.txt)"
"$floe" table schema ns.esc | grep -qF 'a\x1b[31mRED\x1b[0m: long' || fail "schema: $("$floe" table schema ns.esc)"
"$floe" table properties ns.esc | grep -qF 'k\x1b]0;t\x07 = v\x0dZ' || fail "properties: $("$floe" table properties ns.esc)"

# -- fast-forwarding a tag says it is a tag (it said "no branch named") -----------------
"$floe" ref create ns.t ff_tag --tag >/dev/null
rc=0; "$floe" ref fast-forward ns.t ff_tag main > /dev/null 2> err.txt || rc=$?
[ $rc = 1 ] && grep -q "ff_tag is a tag" err.txt || fail "fast-forward of a tag: exit $rc, $(cat err.txt)"

# -- one rule inside floe table: a column the table does not have is a bad argument (exit
# 2, as partition add-field and sort-order set), an empty PATH too; a retention option
# that does not apply to the ref is a bad option (adv24e finding 3) ----------------------
before=$(meta ns.t)
for change in "drop-column nope" "move-column k after nope" "move-column nope first" \
              "set-identifier-fields nope" "rename-column nope x" "widen nope long" \
              "make-optional nope" "add-column nope.x long"; do
  # shellcheck disable=SC2086
  expect_usage "schema $change" table schema ns.t $change
  grep -q "nope" err.txt || fail "schema $change: the column is not named: $(cat err.txt)"
done
expect_usage "schema add-column ''" table schema ns.t add-column "" long
expect_usage "schema drop-column ''" table schema ns.t drop-column ""
rc=0; "$floe" table schema ns.t drop-column nope --json >out.txt 2>/dev/null || rc=$?
[ $rc = 2 ] && grep -q '"code":"USAGE","exit":2' out.txt || fail "schema drop-column nope --json: exit $rc, $(cat out.txt)"
[ "$(meta ns.t)" = "$before" ] || fail "a refused schema change committed"
expect_usage "ref create --tag --max-snapshot-age-ms" ref create ns.t tg1 --tag --max-snapshot-age-ms 1d
expect_usage "ref replace tag --min-snapshots-to-keep" ref replace ns.t ff_tag --min-snapshots-to-keep 2
expect_usage "ref replace main --max-ref-age-ms" ref replace ns.t main --max-ref-age-ms 5
rc=0; "$floe" ref create ns.t tg1 --tag --min-snapshots-to-keep 2 --json >out.txt 2>/dev/null || rc=$?
[ $rc = 2 ] && grep -q '"code":"USAGE","exit":2' out.txt || fail "ref create --tag --min-snapshots-to-keep --json: exit $rc, $(cat out.txt)"
# a struct holding an identifier field: one sentence naming both
printf '%s' '{"type":"struct","fields":[{"id":1,"name":"rs","required":true,"type":{"type":"struct","fields":[{"id":2,"name":"k","required":true,"type":"long"}]}},{"id":3,"name":"v","required":false,"type":"long"}]}' > idf.json
"$floe" table create ns.idf --schema idf.json >/dev/null
"$floe" table schema ns.idf set-identifier-fields rs.k >/dev/null
rc=0; "$floe" table schema ns.idf make-optional rs >/dev/null 2>err.txt || rc=$?
[ $rc = 1 ] && grep -q "make-optional: rs holds identifier field rs.k, which must be required" err.txt ||
  fail "make-optional of a struct holding an identifier field: exit $rc, $(cat err.txt)"
rc=0; "$floe" table schema ns.idf drop-column rs >/dev/null 2>err.txt || rc=$?
[ $rc = 1 ] && grep -q "drop-column: rs holds identifier field rs.k: change" err.txt ||
  fail "drop-column of a struct holding an identifier field: exit $rc, $(cat err.txt)"

[ $fails = 0 ] || exit 1
echo "cli_papercuts_table: ok"
