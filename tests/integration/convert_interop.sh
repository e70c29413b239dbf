#!/usr/bin/env bash
# convert_interop.sh - `floe convert` end to end, judged by three independent readers.
#
#  1. generated events with malformed lines: the quarantine holds exactly the malformed
#     lines, every other event reaches Parquet, and DuckDB, hyparquet and parquet-wasm
#     each read back exactly the input (canonical form), event for event;
#  2. the same with 2 threads gives byte-identical files; rolling at a small target file
#     size splits the rows over several files and loses none;
#  3. every Iceberg type (tests/data/alltypes.ndjson) with every codec;
#  4. gzip and zstd input, and standard input;
#  5. --strict fails on the first bad record and leaves no Parquet file behind.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
readers="duckdb hyparquet parquet-wasm"
fail() { echo "convert_interop: FAIL: $*" >&2; exit 1; }
check_readers() { # expect.ndjson schema files...
  local expect=$1 schema=$2; shift 2
  for r in $readers; do
    node "$js/read_parquet.mjs" --reader "$r" --schema "$schema" "$@" > "$tmp/got.$r.ndjson" ||
      fail "$r could not read $*"
    node "$js/compare.mjs" "$expect" "$tmp/got.$r.ndjson" || fail "$r disagrees with the input ($*)"
  done
}

schema=$src/tests/data/events.schema.json
n=20000
"$floe" gen --seed 11 --count $n --partitions 9 --malformed-rate 0.02 \
  --malformed-lines "$tmp/bad.txt" -o "$tmp/events.ndjson"
nbad=$(wc -l < "$tmp/bad.txt")

# 1. one thread, small row groups and pages so the files have structure
"$floe" convert --schema "$schema" -j 1 --row-group-size 1MB --page-size 64KB --json \
  "$tmp/events.ndjson" -o "$tmp/out1" > "$tmp/sum1.json"
node -e '
  const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const [n, bad] = [Number(process.argv[2]), Number(process.argv[3])];
  if (s.records_in !== n || s.rejected !== bad || s.records_out !== n - bad) {
    console.error("summary counts wrong", s, n, bad); process.exit(1);
  }' "$tmp/sum1.json" $n "$nbad" || fail "summary counts"
q=$tmp/out1/_quarantine/quarantine.ndjson
node -e '
  const fs = require("fs");
  const got = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const want = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").map(Number);
  const lines = fs.readFileSync(process.argv[3], "utf8").split("\n");
  let off = 0; const offsets = [0];
  for (const l of lines) { off += Buffer.byteLength(l) + 1; offsets.push(off); }
  if (got.length !== want.length) { console.error("quarantine has", got.length, "want", want.length); process.exit(1); }
  got.forEach((g, i) => {
    if (g.line !== want[i]) { console.error("line", g.line, "want", want[i]); process.exit(1); }
    if (g.offset !== offsets[g.line - 1]) { console.error("offset", g.offset, "want", offsets[g.line - 1]); process.exit(1); }
    if (g.record !== lines[g.line - 1]) { console.error("record text differs at line", g.line); process.exit(1); }
    if (!g.reason) { console.error("no reason at line", g.line); process.exit(1); }
  });' "$q" "$tmp/bad.txt" "$tmp/events.ndjson" || fail "quarantine contents"
node "$js/canon_ndjson.mjs" --schema "$schema" --skip-lines "$tmp/bad.txt" "$tmp/events.ndjson" \
  > "$tmp/expect.ndjson"
check_readers "$tmp/expect.ndjson" "$schema" "$tmp"/out1/*.parquet

# 2. determinism across thread counts; rolling
"$floe" convert --schema "$schema" -j 2 --row-group-size 1MB --page-size 64KB \
  "$tmp/events.ndjson" -o "$tmp/out2" > /dev/null
cmp "$tmp/out1/part-00000.parquet" "$tmp/out2/part-00000.parquet" ||
  fail "1 and 2 threads wrote different bytes"
"$floe" convert --schema "$schema" -j 2 --row-group-size 256KB --target-file-size 512KB \
  "$tmp/events.ndjson" -o "$tmp/roll" > /dev/null
nfiles=$(ls "$tmp"/roll/*.parquet | wc -l)
[ "$nfiles" -ge 3 ] || fail "expected several files when rolling, got $nfiles"
check_readers "$tmp/expect.ndjson" "$schema" "$tmp"/roll/*.parquet

# 3. every type, every codec
at_schema=$src/tests/data/alltypes.schema.json
node "$js/canon_ndjson.mjs" --schema "$at_schema" "$src/tests/data/alltypes.ndjson" > "$tmp/at.expect"
for codec in snappy zstd gzip lz4_raw brotli none; do
  "$floe" convert --schema "$at_schema" -c $codec "$src/tests/data/alltypes.ndjson" \
    -o "$tmp/at-$codec" > /dev/null
  [ ! -e "$tmp/at-$codec/_quarantine" ] || fail "alltypes: records rejected with $codec"
  check_readers "$tmp/at.expect" "$at_schema" "$tmp/at-$codec/part-00000.parquet"
done

# 4. compressed input and standard input give the same file
gzip -c "$tmp/events.ndjson" > "$tmp/events.ndjson.gz"
zstd -q -c "$tmp/events.ndjson" > "$tmp/events.ndjson.zst"
for f in "$tmp/events.ndjson.gz" "$tmp/events.ndjson.zst"; do
  "$floe" convert --schema "$schema" -j 1 --row-group-size 1MB --page-size 64KB "$f" \
    -o "$tmp/comp" > /dev/null
  cmp "$tmp/out1/part-00000.parquet" "$tmp/comp/part-00000.parquet" || fail "input $f"
  rm -rf "$tmp/comp"
done
"$floe" convert --schema "$schema" -j 1 --row-group-size 1MB --page-size 64KB - \
  -o "$tmp/stdin" < "$tmp/events.ndjson" > /dev/null
cmp "$tmp/out1/part-00000.parquet" "$tmp/stdin/part-00000.parquet" || fail "standard input"

# 5. --strict
set +e
"$floe" convert --schema "$schema" --strict "$tmp/events.ndjson" -o "$tmp/strict" 2> "$tmp/strict.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "--strict exit code $rc"
first=$(head -n 1 "$tmp/bad.txt")
grep -q "line $first" "$tmp/strict.err" || fail "--strict error does not name line $first: $(cat "$tmp/strict.err")"
[ -z "$(find "$tmp/strict" -name '*.parquet' 2>/dev/null)" ] || fail "--strict left Parquet files"

# 6. partitioned output: every file holds only rows of its partition folder, all rows
#    arrive exactly once, hostile partition values stay inside the output folder
"$floe" convert --schema "$schema" -j 2 -p "event_type, day(ts)" "$tmp/events.ndjson" \
  -o "$tmp/part" > /dev/null
for f in $(cd "$tmp/part" && find . -name '*.parquet' | sort); do
  node "$js/read_parquet.mjs" --reader duckdb --schema "$schema" "$tmp/part/$f" |
    node -e '
      const [, et, day] = /event_type=([^/]+)\/ts_day=([^/]+)\//.exec(process.argv[1]);
      const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      for (const r of rows)
        if (r.event_type !== decodeURIComponent(et.replace(/\+/g, " ")) || r.ts.slice(0, 10) !== day) {
          console.error("row of", r.event_type, r.ts, "in", process.argv[1]); process.exit(1);
        }' "$f" || fail "partition folder $f holds foreign rows"
done
node "$js/read_parquet.mjs" --reader duckdb --schema "$schema" $(find "$tmp/part" -name '*.parquet' | sort) \
  > "$tmp/part.ndjson"
node "$js/compare.mjs" --sort-key event_id "$tmp/expect.ndjson" "$tmp/part.ndjson" ||
  fail "partitioned output lost or duplicated rows"
printf '%s\n' \
  '{"event_id":"00000000-0000-4000-8000-000000000001","event_type":"../x","ts":"2026-10-06T00:00:00Z","user_id":1}' \
  '{"event_id":"00000000-0000-4000-8000-000000000002","event_type":"a/b","ts":"2026-10-06T00:00:00Z","user_id":2}' \
  '{"event_id":"00000000-0000-4000-8000-000000000003","event_type":"..","ts":"2026-10-06T00:00:00Z","user_id":3}' \
  > "$tmp/hostile.ndjson"
"$floe" convert --schema "$schema" --unknown-fields ignore -p "event_type" "$tmp/hostile.ndjson" \
  -o "$tmp/hostile/out" > "$tmp/hostile.log" 2>&1 || fail "hostile partition values: $(cat "$tmp/hostile.log")"
[ "$(find "$tmp/hostile" -name '*.parquet' | wc -l)" -eq 3 ] || fail "hostile values: expected 3 files"
find "$tmp/hostile" -name '*.parquet' | while read -r f; do
  case "$(realpath "$f")" in "$(realpath "$tmp/hostile/out")"/event_type=*/part-*.parquet) ;;
    *) fail "partition file escaped its folder: $f" ;; esac
done

# 8. one run per output folder: a folder with files is refused (nothing written), --overwrite
# deletes only what a convert writes there; "out/" names out; usage errors exit 2 on one line
head -n 50 "$tmp/events.ndjson" > "$tmp/few.ndjson"
"$floe" convert --schema "$schema" -p event_type "$tmp/few.ndjson" -o "$tmp/once/" > "$tmp/once.log" 2>&1 ||
  fail "convert into a new folder: $(cat "$tmp/once.log")"
grep -q '//' "$tmp/once.log" && fail "output names with '//': $(grep '//' "$tmp/once.log")"
first=$(find "$tmp/once" -name '*.parquet' | sort)
echo keep > "$tmp/once/notes.txt"
set +e
"$floe" convert --schema "$schema" "$tmp/few.ndjson" -o "$tmp/once" > /dev/null 2> "$tmp/again.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "convert into a folder with files exited $rc (want 1)"
grep -q 'not empty' "$tmp/again.err" || fail "unclear refusal: $(cat "$tmp/again.err")"
[ "$(find "$tmp/once" -name '*.parquet' | sort)" = "$first" ] || fail "the refused run changed the folder"
"$floe" convert --schema "$schema" --overwrite -j 0 "$tmp/few.ndjson" -o "$tmp/once" > /dev/null ||
  fail "--overwrite -j 0"
[ "$(find "$tmp/once" -name '*.parquet')" = "$tmp/once/part-00000.parquet" ] ||
  fail "--overwrite left earlier files: $(find "$tmp/once" -name '*.parquet')"
[ -f "$tmp/once/notes.txt" ] || fail "--overwrite deleted a file convert did not write"
for args in "-c lzo" "-c lz4" "-p nope(user_id)" "--bogus" "-j -1"; do
  set +e
  # shellcheck disable=SC2086
  "$floe" convert --schema "$schema" $args "$tmp/few.ndjson" -o "$tmp/usage" > /dev/null 2> "$tmp/usage.err"
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "convert $args exited $rc (want 2): $(cat "$tmp/usage.err")"
  [ "$(grep -c . "$tmp/usage.err")" -eq 1 ] || fail "convert $args: not one line: $(cat "$tmp/usage.err")"
  [ ! -e "$tmp/usage" ] || fail "convert $args wrote output"
done

# 9. --overwrite clears only this prefix's files: a folder that also holds Parquet another
# prefix's run or another writer made is refused (exit 2, naming the file, one line) and
# nothing in it is deleted or written; with only this prefix's files (and other non-Parquet
# files) it is cleared as before
"$floe" convert --schema "$schema" "$tmp/few.ndjson" -o "$tmp/mixed" --prefix other > /dev/null
"$floe" convert --schema "$schema" "$tmp/few.ndjson" -o "$tmp/mixed/k=a" --prefix part > /dev/null
before=$(cd "$tmp/mixed" && find . -type f | sort && cksum $(find . -type f | sort))
for args in "" "--prefix part" "-p event_type"; do
  set +e
  # shellcheck disable=SC2086
  "$floe" convert --schema "$schema" --overwrite $args "$tmp/few.ndjson" -o "$tmp/mixed" > /dev/null 2> "$tmp/mixed.err"
  rc=$?
  set -e
  [ $rc -eq 2 ] && grep -q 'other-00000.parquet' "$tmp/mixed.err" && [ "$(grep -c . "$tmp/mixed.err")" -eq 1 ] ||
    fail "--overwrite $args over another prefix's files: exit $rc (want 2), $(cat "$tmp/mixed.err")"
  [ "$(cd "$tmp/mixed" && find . -type f | sort && cksum $(find . -type f | sort))" = "$before" ] ||
    fail "--overwrite $args over another prefix's files changed the folder: $(find "$tmp/mixed" -type f)"
done
# another writer's file (DuckDB-style name) beside floe's own
mkdir -p "$tmp/writer"
"$floe" convert --schema "$schema" "$tmp/few.ndjson" -o "$tmp/writer" > /dev/null
cp "$tmp/writer/part-00000.parquet" "$tmp/writer/data_0.parquet"
set +e
"$floe" convert --schema "$schema" --overwrite "$tmp/few.ndjson" -o "$tmp/writer" > /dev/null 2> "$tmp/writer.err"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'data_0.parquet' "$tmp/writer.err" || fail "--overwrite over another writer's file: exit $rc, $(cat "$tmp/writer.err")"
[ -f "$tmp/writer/part-00000.parquet" ] && [ -f "$tmp/writer/data_0.parquet" ] || fail "the refused --overwrite deleted files"
# the other prefix's own folder is cleared of that prefix's files only
rm -r "$tmp/mixed/k=a"
echo keep > "$tmp/mixed/notes.txt"
"$floe" convert --schema "$schema" --overwrite --prefix other "$tmp/few.ndjson" -o "$tmp/mixed" > /dev/null ||
  fail "--overwrite of the same prefix's run"
[ "$(cd "$tmp/mixed" && find . -type f -not -path './_quarantine/*' | sort | tr '\n' ' ')" = "./notes.txt ./other-00000.parquet " ] ||
  fail "--overwrite of the same prefix: $(find "$tmp/mixed" -type f)"

echo "convert_interop: 1 passed, 0 failed"
