#!/usr/bin/env bash
# append_copy.sh - `floe append` of Parquet files, with and without --copy, through a
# rewrite and an expiry:
#   - without --copy the file given becomes the table's data file where it is; a later
#     `floe rewrite` + `floe expire` keeps it there (it lies outside the table's location,
#     which is all floe deletes from) and says so;
#   - with --copy the table records a copy in its data folder (same rows, same bytes),
#     the file given is untouched by the rewrite and the expiry, and the copy is what
#     the expiry deletes;
#   - --help says both;
#   - the copy is named after its bytes, so appending the same file again with --copy is
#     refused as it is without --copy (rows not duplicated), under another name too, and
#     twice in one append; a copy left behind by a run that died before its commit is
#     taken by the re-run (one copy, rows once).
set -euo pipefail
name=append_copy oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

"$floe" append --help | grep -q -- '--copy' || fail "--help does not list --copy"
"$floe" append --help | tr '\n' ' ' | grep -q 'Without --copy the Parquet files themselves become the table.s files' ||
  fail "--help does not say what appending without --copy means"

for i in 1 2; do
  mkdir -p "$tmp/in$i"
  python3 -c 'import sys; i=int(sys.argv[1]); [print("{\"k\":\"r%d\",\"v\":%d}" % (j, i * 100 + j)) for j in range(20)]' "$i" > "$tmp/in$i.ndjson"
  "$floe" convert --schema "$tmp/s.json" -o "$tmp/in$i" "$tmp/in$i.ndjson" >/dev/null
done
f1=$tmp/in1/part-00000.parquet f2=$tmp/in2/part-00000.parquet
sum1=$(sha256sum < "$f1")

# --copy: the table's file is a copy in its data folder
"$floe" table create ns.c --schema "$tmp/s.json" >/dev/null
"$floe" append ns.c "$f1" --copy --json > "$tmp/c.json"
grep -q '"parquet_files":1,"parquet_files_copied":1' "$tmp/c.json" || fail "append --copy --json: $(cat "$tmp/c.json")"
path=$("$floe" files ns.c --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d) == 1, d; print(d[0]["path"].removeprefix("file://"))')
case $path in
  "$tmp"/wh/*/c/data/*-part-00000.parquet) ;;
  *) fail "the copied file is recorded at $path, not in the table's data folder" ;;
esac
[ "$(sha256sum < "$path")" = "$sum1" ] || fail "the copy differs from the file given"
[ "$("$floe" scan ns.c --format canonical | wc -l)" = 20 ] || fail "the copy does not read back 20 rows"
case ${path##*/} in
  "$(sha256sum < "$f1" | cut -c1-32)-part-00000.parquet") ;;
  *) fail "the copy ${path##*/} is not named after the SHA-256 of its bytes" ;;
esac
"$floe" append --help | tr -s '\n ' '  ' | grep -q 'same bytes appended again (any file name) are refused' ||
  fail "--help does not say what a second append --copy of the same file does"

# the same file again, and the same bytes under another name: refused, nothing committed
snaps=$("$floe" snapshots ns.c --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
rc=0; "$floe" append ns.c "$f1" --copy > "$tmp/again.out" 2> "$tmp/again.err" || rc=$?
[ $rc = 1 ] || fail "append --copy of the same file again exits $rc, not 1"
grep -q 'already in the table' "$tmp/again.err" || fail "second append --copy: $(cat "$tmp/again.err")"
cp "$f1" "$tmp/renamed.parquet"
rc=0; "$floe" append ns.c "$tmp/renamed.parquet" --copy 2> "$tmp/again.err" >/dev/null || rc=$?
[ $rc = 1 ] || fail "append --copy of the same bytes under another name exits $rc, not 1"
[ "$("$floe" snapshots ns.c --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = "$snaps" ] ||
  fail "a refused append --copy committed a snapshot"
[ "$("$floe" scan ns.c --format canonical | wc -l)" = 20 ] || fail "rows after the refused re-runs"
[ "$(ls "${path%/*}" | wc -l)" = 1 ] || fail "the refused re-runs left files in the data folder: $(ls "${path%/*}")"

# the same bytes twice in one append: refused
"$floe" table create ns.twice --schema "$tmp/s.json" >/dev/null
rc=0; "$floe" append ns.twice "$f1" "$tmp/renamed.parquet" --copy 2> "$tmp/twice.err" >/dev/null || rc=$?
[ $rc = 1 ] && grep -q 'same bytes is given earlier' "$tmp/twice.err" ||
  fail "the same bytes twice in one append --copy: exit $rc, $(cat "$tmp/twice.err")"
[ "$("$floe" snapshots ns.twice --json)" = "[]" ] || fail "the refused append committed"

# a run that died between copy and commit left its copy: the re-run takes it
"$floe" table create ns.crash --schema "$tmp/s.json" >/dev/null
"$floe" table create ns.probe --schema "$tmp/s.json" >/dev/null
"$floe" append ns.probe "$f1" --copy >/dev/null
left=$("$floe" files ns.probe --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["path"].removeprefix("file://"))')
cdata=$tmp/wh/ns/crash/data
mkdir -p "$cdata" && cp "$left" "$cdata/"
"$floe" append ns.crash "$f1" --copy --json > "$tmp/crash.json" || fail "re-run after a crash failed"
[ "$(ls "$cdata" | wc -l)" = 1 ] || fail "the re-run copied again beside the left copy: $(ls "$cdata")"
grep -q "\"file://$cdata/${left##*/}\"" <<< "$("$floe" files ns.crash --json)" || fail "the re-run did not add the left copy"
[ "$("$floe" scan ns.crash --format canonical | wc -l)" = 20 ] || fail "rows after the re-run"
rc=0; "$floe" append ns.crash "$f1" --copy 2>/dev/null >/dev/null || rc=$?
[ $rc = 1 ] || fail "a third run after the crash re-run exits $rc, not 1"
[ -f "$cdata/${left##*/}" ] || fail "the refused run deleted the table's copy"

"$floe" append ns.c "$f2" --copy >/dev/null
"$floe" rewrite ns.c -o min-input-files=2 --quiet >/dev/null
"$floe" expire ns.c --older-than 0s --retain-last 1 >/dev/null
[ -f "$f1" ] && [ "$(sha256sum < "$f1")" = "$sum1" ] && [ -f "$f2" ] || fail "rewrite + expire touched the files given to append --copy"
[ ! -e "$path" ] || fail "rewrite + expire left the replaced copy $path"
[ "$("$floe" scan ns.c --format canonical | wc -l)" = 40 ] || fail "rows after rewrite + expire"

# without --copy: the file given is the table's, and maintenance deletes it
"$floe" table create ns.n --schema "$tmp/s.json" >/dev/null
"$floe" append ns.n "$f1" >/dev/null
"$floe" append ns.n "$f2" >/dev/null
grep -q "\"file://$f1\"" <<< "$("$floe" files ns.n --json)" || fail "without --copy the table does not record $f1 where it is"
"$floe" rewrite ns.n -o min-input-files=2 --quiet >/dev/null
"$floe" expire ns.n --older-than 0s --retain-last 1 >/dev/null 2> "$tmp/n.err"
[ -e "$f1" ] && [ -e "$f2" ] || fail "without --copy, rewrite + expire deleted the appended files from outside the table's location"
grep -q "kept 2 files outside the table's location" "$tmp/n.err" || fail "expire does not say it kept them: $(cat "$tmp/n.err")"
[ "$("$floe" scan ns.n --format canonical | wc -l)" = 40 ] || fail "rows after rewrite + expire (no copy)"

# a data file of another table: refused as it is (it would be the file of both, and
# either's maintenance would delete it from the other), taken with --copy
"$floe" table create ns.other --schema "$tmp/s.json" >/dev/null
"$floe" convert --schema "$tmp/s.json" -o "$tmp/in3" "$tmp/in1.ndjson" >/dev/null
"$floe" append ns.other "$tmp/in3/part-00000.parquet" --copy >/dev/null
theirs=$("$floe" files ns.other --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["path"].removeprefix("file://"))')
"$floe" table create ns.mine --schema "$tmp/s.json" >/dev/null
rc=0; "$floe" append ns.mine "$theirs" > /dev/null 2> "$tmp/theirs.err" || rc=$?
[ $rc = 1 ] && grep -q "lies in the location of table ns.other" "$tmp/theirs.err" ||
  fail "appending another table's data file: exit $rc, $(cat "$tmp/theirs.err")"
[ "$("$floe" snapshots ns.mine --json)" = "[]" ] || fail "the refused append committed"
"$floe" append ns.mine "$theirs" --copy >/dev/null || fail "append --copy of another table's file"
[ "$("$floe" scan ns.mine --format canonical | wc -l)" = 20 ] || fail "rows of the copied file"

[ $fails = 0 ] || exit 1
echo "$name: ok"
