#!/usr/bin/env bash
# append_copy.sh - `floe append` of Parquet files, with and without --copy, through a
# rewrite and an expiry:
#   - without --copy the file given becomes the table's data file where it is, and a
#     later `floe rewrite` + `floe expire` deletes it from that folder (what the README
#     and --help warn about);
#   - with --copy the table records a copy in its data folder (same rows, same bytes),
#     the file given is untouched by the rewrite and the expiry, and the copy is what
#     the expiry deletes;
#   - --help says both.
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
"$floe" files ns.n --json | grep -q "\"file://$f1\"" || fail "without --copy the table does not record $f1 where it is"
"$floe" rewrite ns.n -o min-input-files=2 --quiet >/dev/null
"$floe" expire ns.n --older-than 0s --retain-last 1 >/dev/null
[ ! -e "$f1" ] && [ ! -e "$f2" ] || fail "without --copy, rewrite + expire kept the appended files (the documented behaviour changed)"
[ "$("$floe" scan ns.n --format canonical | wc -l)" = 40 ] || fail "rows after rewrite + expire (no copy)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
