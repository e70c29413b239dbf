#!/usr/bin/env bash
# table_interop.sh - tables floe writes, read by others; tables others wrote, read and
# appended to by floe.
#
#  1. floe table create / append (NDJSON, Parquet with and without field ids, --once) /
#     scan / snapshots / files / describe / rename / drop --purge on a SQLite catalog.
#     icebird reads the table with the same rows as `floe scan`; DuckDB over the files
#     `floe scan --plan` chooses gives the rows `floe scan` gives (filtered and not).
#  2. Every table under the conformance folder: floe scans it with the row count the
#     index gives (and the rows icebird gives, where icebird can read it); tables the
#     index calls broken are refused with a message naming the problem. Tables whose
#     metadata records a relative location are copied to a scratch folder, registered in
#     a catalog, appended to by floe, and read again by floe and icebird.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
conf=${FLOE_CONFORMANCE:-$src/../shared/conformance}
[ -d "$conf/iceberg" ] || conf=/work/shared/conformance
js=$src/tests/js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "table_interop: FAIL: $*" >&2; exit 1; }
# icebird returns timestamps as milliseconds: cut floe's to milliseconds to compare
ms() { sed -E 's/(T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3})[0-9]{3}(Z?")/\1000\2/g'; }
jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true

# ---------------------------------------------------------------------------------------
# 1. a table floe writes
# ---------------------------------------------------------------------------------------
"$floe" gen --seed 11 --count 3000 -o "$tmp/ev1.ndjson" >/dev/null
"$floe" gen --seed 12 --count 2000 -o "$tmp/ev2.ndjson" >/dev/null
"$floe" gen --schema-out "$tmp/schema.json"
"$floe" namespace create db >/dev/null
"$floe" table create db.events --schema "$tmp/schema.json" --partition "event_type, day(ts)" \
  --property commit.manifest.min-count-to-merge=3 --json > "$tmp/create.json"
"$floe" append db.events "$tmp/ev1.ndjson" --json > "$tmp/a1.json"
[ "$(jget '["added_records"]' < "$tmp/a1.json")" = 3000 ] || fail "first append: $(cat "$tmp/a1.json")"
snap1=$(jget '["snapshot_id"]' < "$tmp/a1.json")
"$floe" append db.events "$tmp/ev2.ndjson" --summary floe.source=test --once floe.batch=b2 \
  --json > "$tmp/a2.json"
[ "$(jget '["noop"]' < "$tmp/a2.json")" = False ] || fail "second append was a noop"
"$floe" append db.events "$tmp/ev2.ndjson" --once floe.batch=b2 --json > "$tmp/a3.json"
[ "$(jget '["noop"]' < "$tmp/a3.json")" = True ] || fail "--once did not stop a repeated batch"

# Parquet files: floe convert output (field ids) and DuckDB output without field ids
"$floe" gen --seed 13 --count 500 -o "$tmp/ev3.ndjson" >/dev/null
"$floe" convert --schema "$tmp/schema.json" "$tmp/ev3.ndjson" -o "$tmp/pq" >/dev/null
(cd "$js" && node --input-type=module -e '
import { DuckDBInstance } from "@duckdb/node-api";
const db = await DuckDBInstance.create(":memory:"); const c = await db.connect();
await c.run(`COPY (SELECT * FROM read_parquet(${JSON.stringify(process.argv[1])})) TO ${JSON.stringify(process.argv[2])} (FORMAT parquet)`);
' "$tmp/pq/part-00000.parquet" "$tmp/noids.parquet")
[ -f "$tmp/noids.parquet" ] || fail "DuckDB did not write the id-less copy"
# a partitioned table takes existing files only when each holds one partition: use an
# unpartitioned table for them
"$floe" table create db.flat --schema "$tmp/schema.json" >/dev/null
"$floe" append db.flat "$tmp/pq/part-00000.parquet" --json > "$tmp/p1.json"
"$floe" append db.flat "$tmp/noids.parquet" --json > "$tmp/p2.json"
[ "$(jget '["parquet_files"]' < "$tmp/p2.json")" = 1 ] || fail "parquet append: $(cat "$tmp/p2.json")"
"$floe" table describe db.flat --json | grep -q 'schema.name-mapping.default' ||
  fail "no name mapping after adding a file without field ids"
n=$("$floe" scan db.flat --format canonical | wc -l)
[ "$n" = 1000 ] || fail "db.flat: $n rows, want 1000"
"$floe" scan db.flat --format canonical | sort > "$tmp/flat.floe"
node "$js/read_parquet.mjs" --reader duckdb --schema "$tmp/schema.json" "$tmp/pq/part-00000.parquet" \
  "$tmp/pq/part-00000.parquet" | sort > "$tmp/flat.want"
cmp -s "$tmp/flat.floe" "$tmp/flat.want" || fail "db.flat rows differ from the files' rows"

# floe scan vs icebird
meta=$("$floe" table describe db.events --json | jget '["metadata_location"]')
"$floe" scan db.events --format canonical | ms | sort > "$tmp/floe.rows"
[ "$(wc -l < "$tmp/floe.rows")" = 5000 ] || fail "scan gave $(wc -l < "$tmp/floe.rows") rows"
node "$js/icebird_read.mjs" --metadata "$meta" | sort > "$tmp/icebird.rows"
cmp -s "$tmp/floe.rows" "$tmp/icebird.rows" || {
  diff "$tmp/floe.rows" "$tmp/icebird.rows" | head -5 >&2; fail "icebird and floe scan differ"; }
meta2=$("$floe" table describe db.flat --json | jget '["metadata_location"]')
[ "$(node "$js/icebird_read.mjs" --metadata "$meta2" --count)" = 1000 ] || fail "icebird on db.flat"

# DuckDB over the planned files
for where in "" "event_type = 'click' AND ts >= '2026-10-06T00:00:01Z'" "user_id < 1000 OR amount IS NULL"; do
  args=(); [ -n "$where" ] && args=(--where "$where")
  "$floe" scan db.events "${args[@]}" --plan --json > "$tmp/plan.json"
  python3 -c 'import json,sys; [print(f["local_path"]) for f in json.load(open(sys.argv[1]))["files"]]' \
    "$tmp/plan.json" > "$tmp/files.txt"
  "$floe" scan db.events "${args[@]}" --format canonical | sort > "$tmp/scan.rows"
  # DuckDB reads whole files; the filter is applied to its rows by floe's own rule-free
  # path: compare the unfiltered plan exactly, the filtered ones as a subset
  node "$js/read_parquet.mjs" --reader duckdb --schema "$tmp/schema.json" $(cat "$tmp/files.txt") |
    sort > "$tmp/duck.rows"
  if [ -z "$where" ]; then
    cmp -s "$tmp/scan.rows" "$tmp/duck.rows" || fail "DuckDB over the planned files differs"
  else
    [ -s "$tmp/scan.rows" ] || fail "filter '$where' gave no rows"
    comm -23 "$tmp/scan.rows" "$tmp/duck.rows" | grep -q . && fail "filter '$where': rows not in the planned files"
    planned=$(jget '["data_files"]' < "$tmp/plan.json")
    total=$("$floe" scan db.events --plan --json | jget '["data_files"]')
    case $where in *event_type*) [ "$planned" -lt "$total" ] || fail "filter '$where' pruned nothing ($planned of $total)" ;; esac
  fi
done
# the filter is exact: DuckDB's own WHERE on the same files gives the same count
want=$(grep -c '"event_type":"click"' "$tmp/duck.rows" || true)
got=$("$floe" scan db.events --where "event_type = 'click'" --format canonical | wc -l)
[ "$got" = "$(grep -c '"event_type":"click"' "$tmp/floe.rows")" ] || fail "click rows: $got"

# time travel, snapshots, files, csv, limit
[ "$("$floe" scan db.events --snapshot "$snap1" --format canonical | wc -l)" = 3000 ] || fail "--snapshot"
[ "$("$floe" scan db.events --as-of 2000-01-01 2>/dev/null | wc -l)" = 0 ] && \
  "$floe" scan db.events --as-of 2000-01-01 >/dev/null 2>&1 && fail "--as-of before the table should fail"
[ "$("$floe" scan db.events --as-of "$(date -u +%Y-%m-%dT%H:%M:%S -d '+1 min')" --format canonical | wc -l)" = 5000 ] || fail "--as-of now"
[ "$("$floe" snapshots db.events --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2 ] || fail "snapshots"
nfiles=$("$floe" files db.events --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$nfiles" -gt 2 ] || fail "files: $nfiles"
[ "$("$floe" scan db.events --format csv --limit 7 --columns event_id,device.os | wc -l)" = 8 ] || fail "csv+limit"
"$floe" scan "$(dirname "$(dirname "$meta")")" --limit 1 >/dev/null || fail "scan by table folder"

# usage and failures
set +e
"$floe" scan >/dev/null 2>&1; [ $? -eq 2 ] || fail "scan without a table should exit 2"
"$floe" scan db.events --where "nope = 1" >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown column in --where should exit 2 (a usage error)"
"$floe" scan db.missing >/dev/null 2>&1; [ $? -eq 1 ] || fail "missing table should exit 1"
"$floe" append "$tmp" "$tmp/ev1.ndjson" >/dev/null 2>&1; [ $? -eq 1 ] || fail "append to a path should exit 1"
set -e

# namespace properties, list, rename, drop --purge
"$floe" namespace properties db set owner=tests --json | grep -q '"owner":"tests"' || fail "namespace properties"
"$floe" table list --json | grep -q '"db.events"' || fail "table list"
"$floe" table rename db.flat db.flat2 >/dev/null
"$floe" table describe db.flat2 >/dev/null || fail "rename"
loc=$("$floe" table describe db.flat2 --json | jget '["location"]')
"$floe" table drop db.flat2 --purge --json > "$tmp/drop.json"
[ -z "$(find "$loc" -name '*.avro' 2>/dev/null)" ] || fail "drop --purge left manifests"
[ -f "$tmp/pq/part-00000.parquet" ] || fail "drop --purge deleted a file outside the table"

# ---------------------------------------------------------------------------------------
# 2. conformance tables
# ---------------------------------------------------------------------------------------
ice=$conf/iceberg
# folder | rows | icebird reads it (1/0)
while IFS='|' read -r dir rows icebird; do
  [ -n "$dir" ] || continue
  t=$ice/$dir
  args=()
  case $dir in *column_mapping*) args=(--relocate "data/persistent/=$ice/duckdb-iceberg/") ;; esac
  got=$("$floe" scan "$t" "${args[@]}" --format canonical 2>"$tmp/err" | wc -l) ||
    fail "$dir: $(cat "$tmp/err")"
  [ "$got" = "$rows" ] || fail "$dir: $got rows, the index says $rows ($(head -c 300 "$tmp/err"))"
  if [ "$icebird" = 1 ]; then
    m=$("$floe" catalog locate "$t")
    "$floe" scan "$t" "${args[@]}" --format canonical 2>/dev/null | ms | sort > "$tmp/c.floe"
    node "$js/icebird_read.mjs" --metadata "$m" --map "data/persistent=$ice/duckdb-iceberg" | sort > "$tmp/c.ice"
    cmp -s "$tmp/c.floe" "$tmp/c.ice" || { diff "$tmp/c.floe" "$tmp/c.ice" | head -4 >&2; fail "$dir: floe and icebird differ"; }
  fi
done <<'EOF'
duckdb-iceberg/add_columns_with_defaults/default.db/add_columns_with_defaults|3|0
duckdb-iceberg/case_sensitive_names/default.db/case_sensitive_names|3|1
duckdb-iceberg/column_mapping/warehouse/default.db/my_table|3|0
duckdb-iceberg/custom_write_paths|0|0
duckdb-iceberg/expression_filter|3|1
duckdb-iceberg/hive_partitioned_table|6|0
duckdb-iceberg/iceberg/lineitem_iceberg_gz|111968|0
duckdb-iceberg/iceberg/lineitem_iceberg_gz_no_hint|111968|0
duckdb-iceberg/iceberg_v1_deprecated/default/legacy_v1|3|0
duckdb-iceberg/is_null_is_not_null|8|1
duckdb-iceberg/map_stats/default.db/map_stats|2|0
duckdb-iceberg/null_stats/default/test_nulls|9|1
duckdb-iceberg/partition_bigint|2|0
duckdb-iceberg/partition_binary|2|0
duckdb-iceberg/partition_bool|2|0
duckdb-iceberg/partition_decimal_bigint|10|0
duckdb-iceberg/partition_decimal_integer|3|0
duckdb-iceberg/partition_decimal_smallint|2|0
duckdb-iceberg/partition_double|2|0
duckdb-iceberg/partition_fixed_length_binary/default.db/partition_fixed_length_binary|2|0
duckdb-iceberg/partition_float|2|0
duckdb-iceberg/partition_integer|2|0
duckdb-iceberg/partition_time/default.db/partition_time|2|0
duckdb-iceberg/partition_timestamp/default.db/partition_timestamp|2|0
duckdb-iceberg/partition_timestamptz/default.db/partition_timestamptz|2|0
duckdb-iceberg/uuid|10|1
icebird/java_bunnies|15|1
icebird/spark_bunnies|20|1
icebird/spark_rename_column|4|1
EOF

# negative controls: refused with a message naming the problem
set +e
"$floe" scan "$ice/duckdb-iceberg/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qi "deletion vector\|puffin" "$tmp/err" || fail "bare DV not refused clearly: $(cat "$tmp/err")"
"$floe" scan "$ice/duckdb-iceberg/big_query_error" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && [ -s "$tmp/err" ] || fail "big_query_error not refused"
"$floe" scan "$ice/duckdb-iceberg/generated_bounds" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "s3://fake-bucket" "$tmp/err" || fail "generated_bounds: $(cat "$tmp/err")"
# snapshot id 9876543210123456789 (PyIceberg): past the signed 64-bit range of a long,
# refused naming the field (Iceberg Java refuses it too), never wrapped
"$floe" scan "$ice/duckdb-iceberg/equality_delete_extra_column/warehouse/ns/t" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q '"current-snapshot-id" is 9876543210123456789' "$tmp/err" ||
    fail "equality_delete_extra_column: $(cat "$tmp/err")"
# nor is such an id taken from the command line (strtoll would clamp it to 2^63 - 1)
"$floe" scan "$ice/icebird/java_bunnies" --snapshot 9876543210123456789 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "signed 64-bit" "$tmp/err" || fail "--snapshot past 2^63: $(cat "$tmp/err")"
set -e
# metadata-only planning works on generated_bounds (5000 entries)
n=$("$floe" scan "$ice/duckdb-iceberg/generated_bounds" --plan --json 2>/dev/null | jget '["data_files"]')
[ "$n" = 5000 ] || fail "generated_bounds plan: $n files"
# files rewritten after the commit are reported
"$floe" scan "$ice/duckdb-iceberg/partition_bigint" >/dev/null 2>"$tmp/err"
grep -q "rewritten after the commit" "$tmp/err" || fail "partition_bigint size mismatch not reported"

# appends to copies: the tables that record a relative location (data/persistent/...)
# are copied under scratch/data/persistent and used with scratch as the working folder
mkdir -p "$tmp/scratch/data/persistent"
cp -r "$ice/duckdb-iceberg/." "$tmp/scratch/data/persistent/"
chmod -R u+w "$tmp/scratch"
(
  cd "$tmp/scratch"
  export FLOE_CATALOG_URI="$tmp/scratch/catalog.db" FLOE_WAREHOUSE="$tmp/scratch/wh"
  "$floe" namespace create conf >/dev/null
  k=0
  while IFS='|' read -r dir rows icebird; do
    [ -n "$dir" ] || continue
    k=$((k + 1))
    t=data/persistent/$dir
    m=$("$floe" catalog locate "$t")
    "$floe" table register "conf.t$k" "$m" >/dev/null
    # one of the table's own data files, appended again as an existing Parquet file
    first=$("$floe" scan "conf.t$k" --plan --json | python3 -c 'import json,sys; f=json.load(sys.stdin)["files"]; print(f[0]["local_path"] if f else "")')
    [ -n "$first" ] || { echo "skip append to $dir: no data file"; continue; }
    cp "$first" "$tmp/scratch/extra$k.parquet"
    before=$("$floe" scan "conf.t$k" --format canonical 2>/dev/null | wc -l)
    add=$("$floe" append "conf.t$k" "$tmp/scratch/extra$k.parquet" --json 2>"$tmp/err" | jget '["added_records"]') ||
      fail "append to $dir: $(cat "$tmp/err")"
    after=$("$floe" scan "conf.t$k" --format canonical 2>/dev/null | wc -l)
    [ $((before + add)) -le "$after" ] || fail "$dir after append: $after rows, want >= $before + $add"
    if [ "$icebird" = 1 ]; then
      m2=$("$floe" table describe "conf.t$k" --json | jget '["metadata_location"]')
      ib=$(node "$js/icebird_read.mjs" --metadata "$m2" --map "data/persistent=$tmp/scratch/data/persistent" --count)
      [ "$ib" = "$after" ] || fail "$dir after append: icebird reads $ib rows, floe $after"
    fi
  done <<'EOF'
case_sensitive_names/default.db/case_sensitive_names|3|1
expression_filter|3|1
is_null_is_not_null|8|1
null_stats/default/test_nulls|9|1
uuid|10|1
add_columns_with_defaults/default.db/add_columns_with_defaults|3|0
map_stats/default.db/map_stats|2|0
EOF
)
echo "table_interop: ok"
