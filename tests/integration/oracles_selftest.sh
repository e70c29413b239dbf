#!/usr/bin/env bash
# oracles_selftest.sh - proves the test-oracle chain before floe's writer is judged by it.
#
# DuckDB writes Parquet from `floe gen` events (and from tests/data/alltypes.ndjson, which
# covers every Iceberg type the oracles know); each of the three readers in
# tests/js/read_parquet.mjs must print exactly what tests/js/canon_ndjson.mjs makes of the
# input. Then the negative checks: a wrong schema, a changed row, a reordered file and a
# malformed input line must each be caught.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
readers="duckdb hyparquet parquet-wasm"
fail() { echo "oracles_selftest: FAIL: $*" >&2; exit 1; }

# 1. The schema floe gen prints is the one kept in the repository.
"$floe" gen --schema-out "$tmp/events.schema.json"
cmp "$tmp/events.schema.json" "$src/tests/data/events.schema.json" ||
  fail "floe gen --schema-out differs from tests/data/events.schema.json"
schema=$src/tests/data/events.schema.json

# 2. Generated events, with malformed lines that canon_ndjson and DuckDB skip.
"$floe" gen --seed 7 --count 3000 --partitions 12 --malformed-rate 0.05 \
  --malformed-lines "$tmp/bad.txt" -o "$tmp/events.ndjson"
nbad=$(wc -l < "$tmp/bad.txt")
[ "$nbad" -gt 50 ] || fail "expected malformed lines, got $nbad"
node "$js/canon_ndjson.mjs" --schema "$schema" --skip-lines "$tmp/bad.txt" "$tmp/events.ndjson" \
  > "$tmp/expect.ndjson"
[ "$(wc -l < "$tmp/expect.ndjson")" -eq $((3000 - nbad)) ] || fail "canon_ndjson row count"
node "$js/duckdb_copy.mjs" --schema "$schema" --row-group-size 1000 --skip-lines "$tmp/bad.txt" \
  "$tmp/events.ndjson" "$tmp/events.parquet"
for r in $readers; do
  node "$js/read_parquet.mjs" --reader "$r" --schema "$schema" "$tmp/events.parquet" > "$tmp/$r.ndjson"
  node "$js/compare.mjs" "$tmp/expect.ndjson" "$tmp/$r.ndjson" || fail "$r disagrees with canon_ndjson"
  # Without --schema the reader derives one from the file; the values are the same.
  node "$js/read_parquet.mjs" --reader "$r" "$tmp/events.parquet" > "$tmp/$r.noschema.ndjson"
  node "$js/compare.mjs" "$tmp/expect.ndjson" "$tmp/$r.noschema.ndjson" || fail "$r without --schema"
done

# 3. Every type: hand-written records through DuckDB and back.
at_schema=$src/tests/data/alltypes.schema.json
node "$js/canon_ndjson.mjs" --schema "$at_schema" "$src/tests/data/alltypes.ndjson" > "$tmp/at.expect"
node "$js/duckdb_copy.mjs" --schema "$at_schema" "$src/tests/data/alltypes.ndjson" "$tmp/at.parquet"
for r in $readers; do
  node "$js/read_parquet.mjs" --reader "$r" --schema "$at_schema" "$tmp/at.parquet" > "$tmp/at.$r"
  node "$js/compare.mjs" "$tmp/at.expect" "$tmp/at.$r" || fail "$r disagrees on alltypes"
done
grep -q '"f":0.10000000149011612,"d":0.1,' "$tmp/at.expect" || fail "float canonical form"
grep -q '"d":"NaN"' "$tmp/at.expect" || fail "NaN canonical form"
grep -q '"l":-9223372036854775808,' "$tmp/at.expect" || fail "long canonical form"

# 4. Negative checks: each must be caught.
sed 's/"timestamptz"/"timestamp"/' "$schema" > "$tmp/wrong.schema.json"
for r in $readers; do
  if node "$js/read_parquet.mjs" --reader "$r" --schema "$tmp/wrong.schema.json" "$tmp/events.parquet" \
      > /dev/null 2>&1; then
    fail "$r accepted timestamptz data as timestamp"
  fi
done
sed '17s/"is_bot":false/"is_bot":X/; 17s/"is_bot":true/"is_bot":false/; 17s/"is_bot":X/"is_bot":true/' "$tmp/duckdb.ndjson" > "$tmp/changed.ndjson"
cmp -s "$tmp/changed.ndjson" "$tmp/duckdb.ndjson" && fail "test setup: row 17 unchanged"
if node "$js/compare.mjs" "$tmp/expect.ndjson" "$tmp/changed.ndjson" > "$tmp/cmp.out"; then
  fail "compare missed a changed row"
fi
grep -q 'is_bot' "$tmp/cmp.out" || fail "compare did not name the differing field"
sort "$tmp/duckdb.ndjson" > "$tmp/sorted.ndjson"
if node "$js/compare.mjs" "$tmp/expect.ndjson" "$tmp/sorted.ndjson" > /dev/null; then
  fail "compare ignored row order"
fi
node "$js/compare.mjs" --sort-key event_id "$tmp/expect.ndjson" "$tmp/sorted.ndjson" ||
  fail "compare --sort-key on a reordered file"
head -n 100 "$tmp/sorted.ndjson" > "$tmp/short.ndjson"
if node "$js/compare.mjs" --sort-key event_id "$tmp/expect.ndjson" "$tmp/short.ndjson" > /dev/null; then
  fail "compare --sort-key missed missing rows"
fi
if node "$js/canon_ndjson.mjs" --schema "$schema" "$tmp/events.ndjson" > /dev/null 2>&1; then
  fail "canon_ndjson accepted malformed lines"
fi

# 5. duckdb_meta sees the field ids DuckDB wrote.
node "$js/duckdb_meta.mjs" "$tmp/events.parquet" > "$tmp/meta.json"
node -e '
  const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const ids = Object.fromEntries(m.schema.filter((r) => r.field_id != null).map((r) => [r.name, r.field_id]));
  const want = { event_id: 1, ts: 3, device: 6, lat: 20, tags: 10, element: 22, consent: 13 };
  for (const [k, v] of Object.entries(want)) if (ids[k] !== v) { console.error("field id", k, ids[k]); process.exit(1); }
  if (m.file[0].num_rows !== 3000 - Number(process.argv[2])) { console.error("num_rows", m.file[0].num_rows); process.exit(1); }
' "$tmp/meta.json" "$nbad" || fail "duckdb_meta"

echo "oracles_selftest: ok ($((3000 - nbad)) events, 3 readers agree)"
