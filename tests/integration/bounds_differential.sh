#!/usr/bin/env bash
# bounds_differential.sh - the column bounds floe append records for existing Parquet
# files are the data's, and pruning by them never changes a scan's rows.
#
#  1. Rows with nulls, NaN, -0.0/0.0, infinities, int extremes, non-ASCII and long
#     strings, timestamps from 1968 on, two decimal precisions, uuids, binary, a struct
#     and a list (tests/js/bounds_oracle.mjs gen) are written as Parquet by DuckDB (1000-row
#     row groups, no field ids), by arrow-rs through parquet-wasm (700-row row groups with
#     page statistics, truncated for long strings; and 900-row ones without any
#     statistics), and by floe convert (16 KB row groups), a different slice of rows each
#     (8,500 in all).
#  2. floe append adds the four files to tables with full and with the default
#     truncate(16) metrics, and NDJSON of the same rows goes through floe's own writer: for
#     every data file the manifest bounds equal DuckDB's min/max of its non-null, non-NaN
#     values (truncated as Iceberg truncates), null and NaN counts equal DuckDB's
#     (bounds_oracle.mjs check, manifests read by avsc).
#  3. A partitioned table (bucket(3, i), month(ts)) refuses the files naming a column and
#     two values, and takes them with --split; bounds checked.
#  4. Random --where filters (test_prune_diff, BOUNDS_FILTERS per table, default 300):
#     pruned scans keep every row the unpruned ones give, on each table above; a few
#     through the CLI too (floe scan versus floe scan --no-prune).
# tests/integration/bounds_rewrite.sh does the same for tables written by floe rewrite
# and floe serve, prune_conformance.sh for the shared conformance tables.
name=bounds_differential
. "$(dirname "$0")/lib/bounds_common.sh"

# ---------------------------------------------------------------------------------------
# 1. files from three writers
# ---------------------------------------------------------------------------------------
oracle schema > "$tmp/schema.json"
# DuckDB cuts row groups at multiples of 2048 rows: 2500 for it
oracle gen --seed 5 --rows 2500 --start 0 > "$tmp/rows0.ndjson"
for k in 1 2; do oracle gen --seed $((k + 5)) --rows 1500 --start $((1000 + k * 1500)) > "$tmp/rows$k.ndjson"; done
oracle gen --seed 8 --rows 3000 --start 5500 > "$tmp/rows3.ndjson"
# DuckDB, without field ids (the name mapping path)
node "$js/duckdb_copy.mjs" --schema "$tmp/schema.json" "$tmp/rows0.ndjson" "$tmp/duck_ids.parquet"
(cd "$js" && node --input-type=module -e '
import { DuckDBInstance } from "@duckdb/node-api";
const q = (s) => "\x27" + s.replace(/\x27/g, "\x27\x27") + "\x27";
const db = await DuckDBInstance.create(":memory:", { threads: "1" }); const c = await db.connect();
await c.run(`COPY (SELECT * FROM read_parquet(${q(process.argv[1])})) TO ${q(process.argv[2])} (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
' "$tmp/duck_ids.parquet" "$tmp/duck.parquet")
node "$js/duckdb_copy.mjs" --schema "$tmp/schema.json" "$tmp/rows1.ndjson" "$tmp/a_src.parquet"
node "$js/duckdb_copy.mjs" --schema "$tmp/schema.json" "$tmp/rows2.ndjson" "$tmp/b_src.parquet"
oracle arrow "$tmp/a_src.parquet" "$tmp/arrow.parquet" --row-group-size 700
oracle arrow "$tmp/b_src.parquet" "$tmp/arrow_nostats.parquet" --row-group-size 900 --no-stats
# several input files: a batch (and row group) per file
split -l 600 "$tmp/rows3.ndjson" "$tmp/rows3.part."
"$floe" convert --schema "$tmp/schema.json" "$tmp"/rows3.part.* -o "$tmp/conv" --row-group-size 16KB -j 1 >/dev/null
files=("$tmp/duck.parquet" "$tmp/arrow.parquet" "$tmp/arrow_nostats.parquet" "$tmp/conv/part-00000.parquet")
rgs=0
for f in "${files[@]}"; do
  n=$("$floe" inspect --json "$f" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["row_groups"]))')
  [ "$n" -ge 2 ] || fail "$f: $n row group(s), the test wants several"
  rgs=$((rgs + n))
done
echo "files: ${#files[@]} from DuckDB, arrow-rs (with and without statistics) and floe convert, $rgs row groups, 8500 rows"

# ---------------------------------------------------------------------------------------
# 2. appended files and floe's own files: bounds equal DuckDB's
# ---------------------------------------------------------------------------------------
"$floe" namespace create b >/dev/null
"$floe" table create b.full --schema "$tmp/schema.json" --property write.metadata.metrics.default=full >/dev/null
"$floe" table create b.trunc --schema "$tmp/schema.json" >/dev/null
"$floe" append b.full "${files[@]}" >/dev/null
"$floe" append b.trunc "${files[@]}" >/dev/null
check b.full full 4
check b.trunc truncate16 4
"$floe" table create b.nd --schema "$tmp/schema.json" --property write.metadata.metrics.default=full \
  --property write.parquet.row-group-size-bytes=16384 >/dev/null
for k in 0 1 2 3; do "$floe" append b.nd "$tmp/rows$k.ndjson" >/dev/null; done
check b.nd full 4
# the issue's repro: a lower bound below the first row group's maximum
n1=$("$floe" scan b.trunc --where "ts < '1968-11-27T06:00:00Z'" --format canonical | wc -l)
n2=$("$floe" scan b.trunc --where "ts < '1968-11-27T06:00:00Z'" --no-prune --format canonical | wc -l)
[ "$n1" -gt 0 ] && [ "$n1" = "$n2" ] || fail "ts < X: $n1 rows pruned, $n2 unpruned"

# ---------------------------------------------------------------------------------------
# 3. partitions: refused, --split
# ---------------------------------------------------------------------------------------
"$floe" table create b.part --schema "$tmp/schema.json" --partition "bucket(3, i), month(ts)" \
  --property write.parquet.row-group-size-bytes=16384 >/dev/null
if "$floe" append b.part "$tmp/duck.parquet" 2> "$tmp/refused.txt"; then fail "a file of many partitions was taken"; fi
grep -q 'duck.parquet: rows of more than one partition: column [a-z]* holds' "$tmp/refused.txt" ||
  fail "refusal message: $(cat "$tmp/refused.txt")"
"$floe" append b.part "${files[@]}" --split --json > "$tmp/split.json"
python3 - "$tmp/split.json" <<'PY' || fail "--split: $(cat "$tmp/split.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["parquet_files_split"] == 4 and r["split_files"] >= 8 and r["added_records"] == 8500, r
PY
check b.part truncate16 8

# ---------------------------------------------------------------------------------------
# 4. random filters: pruned == unpruned
# ---------------------------------------------------------------------------------------
prune_diff "b.full@$((filters / 2));b.trunc@$((filters / 2));b.nd@$((filters / 2));b.part@$filters"
pruned_some b.full b.trunc b.nd b.part
cli_same b.part "id < -29000" "NOT (d < 0)" "d != NaN" "s LIKE 'é%'" \
  "ts >= '1968-11-28T00:00:00Z' AND i IN (5, -7)" "dec > '0.01' OR st.x IS NULL" \
  "u = '00000000-0000-0000-0000-000000000000' OR f <= -0.0"
echo "$name: ok"
