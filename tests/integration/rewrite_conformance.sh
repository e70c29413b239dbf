#!/usr/bin/env bash
# rewrite_conformance.sh - every table of ../shared/conformance/iceberg/, copied to a
# scratch folder, is rewritten by `floe rewrite` (rewrite-all, dangling deletes removed)
# and then read by icebird (an independent reader that applies deletes): the rows after
# equal the rows before. Tables icebird cannot read or reads without what the spec asks
# for (Avro fixed partition values, initial-default, identity partition values missing
# from the files, the v1 gzip table's paths) are compared with `floe scan` before and
# after; icebird must still read them after the rewrite. Tables with deletes must come out with no
# live delete file. After every rewrite the snapshot's summary totals must equal what its
# manifests hold (summary_check.mjs, avsc), also when delete files stay live. Tables floe refuses on purpose (negative controls) must fail cleanly
# and stay untouched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
conf=${FLOE_CONFORMANCE:-$root/../shared/conformance}/iceberg
js=$root/tests/js
[ -d "$conf" ] || { echo "missing conformance folder $conf"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$conf"/. "$tmp/orig"
cp -r "$conf"/. "$tmp/work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

icebird_rows() { # table-folder out-file
    local md
    md=$("$FLOE" catalog locate "$1")
    node "$js/icebird_read.mjs" --metadata "$md" | LC_ALL=C sort > "$2"
}
scan_rows() { # table-folder out-file [relocate]
    # floe's status and message are its own: piped, with its stderr dropped, a scan that
    # failed ended the script (set -e, pipefail) without a word
    if ! "$FLOE" scan "$1" ${3:+--relocate "$3"} --format canonical > "$2.raw" \
        2> "$tmp/scan.err"; then
        fail "floe scan $1: $(tail -c 600 "$tmp/scan.err")"
        : > "$2"
        return 0
    fi
    # uuid text without dashes: a file may hold a uuid column as plain fixed[16] (printed
    # as hex) that the rewrite writes with its table type
    sed -E 's/"([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})"/"\1\2\3\4\5"/g' \
        "$2.raw" | LC_ALL=C sort > "$2"
}
live_deletes() { # table-folder -> total-delete-files of the current snapshot
    local md
    md=$("$FLOE" catalog locate "$1")
    node -e '
      const fs = require("fs"), zlib = require("zlib");
      let b = fs.readFileSync(process.argv[1]);
      if (b[0] === 0x1f) b = zlib.gunzipSync(b);
      const m = JSON.parse(b);
      const s = (m.snapshots || []).find(x => String(x["snapshot-id"]) === String(m["current-snapshot-id"]));
      console.log(s && s.summary ? (s.summary["total-delete-files"] ?? "?") : "none");
    ' "$md"
}

summary_ok() { # table-folder label: the totals of the current snapshot against its manifests
    local md
    md=$("$FLOE" catalog locate "$1")
    node "$js/summary_check.mjs" --metadata "$md" > "$tmp/sum" 2>/dev/null ||
        fail "$2: $(cat "$tmp/sum")"
}

# Delete files that stay live (dangling ones kept) count in the totals of the rewrite.
for rel in icebird/java_bunnies icebird/spark_bunnies; do
    k="$tmp/keep/$rel"
    mkdir -p "$(dirname "$k")"
    cp -r "$conf/$rel" "$k"
    if "$FLOE" rewrite "$k" -q -o rewrite-all=true > /dev/null 2> "$tmp/err"; then
        summary_ok "$k" "$rel (deletes kept)"
        [ "$(live_deletes "$k")" != 0 ] || fail "$rel: expected its delete files to stay live"
    else
        fail "$rel: rewrite keeping deletes failed: $(cat "$tmp/err")"
    fi
done

# folder | how to compare | relocation (column_mapping keeps its data file outside)
#   icebird    icebird before and after
#   scan       floe scan before and after; icebird reads as many rows after (the bunnies
#              tables: icebird finds columns by Iceberg Java's sanitized Parquet names,
#              "Breed_x20Name", and reads floe's raw "Breed Name" columns as null, so
#              only its row count is compared)
#   scan-only  floe scan before and after (icebird cannot read Avro fixed partitions, nor a
#              v1 table after a rewrite: the table stays v1 and icebird wants file sequence
#              numbers on its DELETED entries; format_v1.sh checks that table with DuckDB)
tables=(
  "duckdb-iceberg/add_columns_with_defaults/default.db/add_columns_with_defaults|scan|"
  "duckdb-iceberg/case_sensitive_names/default.db/case_sensitive_names|icebird|"
  "duckdb-iceberg/column_mapping/warehouse/default.db/my_table|scan|column_mapping"
  "duckdb-iceberg/expression_filter|icebird|"
  "duckdb-iceberg/hive_partitioned_table|scan|"
  "duckdb-iceberg/iceberg/lineitem_iceberg_gz|scan-only|"
  "duckdb-iceberg/is_null_is_not_null|icebird|"
  "duckdb-iceberg/map_stats/default.db/map_stats|icebird|"
  "duckdb-iceberg/null_stats/default/test_nulls|icebird|"
  "duckdb-iceberg/partition_bigint|scan|"
  "duckdb-iceberg/partition_binary|scan|"
  "duckdb-iceberg/partition_bool|scan|"
  "duckdb-iceberg/partition_decimal_bigint|scan-only|"
  "duckdb-iceberg/partition_decimal_integer|scan-only|"
  "duckdb-iceberg/partition_decimal_smallint|scan-only|"
  "duckdb-iceberg/partition_double|scan|"
  "duckdb-iceberg/partition_fixed_length_binary/default.db/partition_fixed_length_binary|scan-only|"
  "duckdb-iceberg/partition_float|scan|"
  "duckdb-iceberg/partition_integer|scan|"
  "duckdb-iceberg/partition_time/default.db/partition_time|scan|"
  "duckdb-iceberg/partition_timestamp/default.db/partition_timestamp|scan|"
  "duckdb-iceberg/partition_timestamptz/default.db/partition_timestamptz|scan|"
  "duckdb-iceberg/uuid|icebird|"
  "icebird/java_bunnies|scan|"
  "icebird/spark_bunnies|scan|"
  "icebird/spark_rename_column|icebird|"
)
for entry in "${tables[@]}"; do
    IFS='|' read -r rel how reloc <<< "$entry"
    o="$tmp/orig/$rel" w="$tmp/work/$rel"
    rl=""
    if [ "$reloc" = column_mapping ]; then
        rl="data/persistent/column_mapping/warehouse=$tmp/work/duckdb-iceberg/column_mapping/warehouse"
        rlo="data/persistent/column_mapping/warehouse=$tmp/orig/duckdb-iceberg/column_mapping/warehouse"
    fi
    if [ "$how" = icebird ]; then
        icebird_rows "$o" "$tmp/before" || { fail "$rel: icebird cannot read it"; continue; }
    else
        scan_rows "$o" "$tmp/before" "${rlo:-}"
    fi
    [ -s "$tmp/before" ] || { fail "$rel: no rows before"; continue; }
    if ! "$FLOE" rewrite "$w" ${rl:+--relocate "$rl"} -q --json \
        -o rewrite-all=true -o remove-dangling-deletes=true > "$tmp/res.json" 2> "$tmp/err"; then
        fail "$rel: rewrite failed: $(cat "$tmp/err")"
        continue
    fi
    grep -q '"groups_committed":[1-9]' "$tmp/res.json" || { fail "$rel: nothing committed: $(cat "$tmp/res.json")"; continue; }
    if [ "$how" = icebird ]; then
        icebird_rows "$w" "$tmp/after" ||
            { fail "$rel: icebird cannot read the rewritten table"; continue; }
    else
        scan_rows "$w" "$tmp/after" "$rl"
    fi
    if ! cmp -s "$tmp/before" "$tmp/after"; then
        fail "$rel: rows differ after the rewrite"
        diff "$tmp/before" "$tmp/after" | head -5 || true
        continue
    fi
    if [ "$how" = scan ] && [ "$reloc" != column_mapping ]; then
        icebird_rows "$w" "$tmp/ib" || fail "$rel: icebird cannot read the rewritten table"
        [ "$(wc -l < "$tmp/ib")" = "$(wc -l < "$tmp/after")" ] ||
            fail "$rel: icebird reads $(wc -l < "$tmp/ib") rows after the rewrite"
    fi
    summary_ok "$w" "$rel"
    d=$(live_deletes "$w")
    [ "$d" = 0 ] || fail "$rel: $d delete files still live after the rewrite"
    echo "ok $rel ($(wc -l < "$tmp/after") rows)"
done

# Negative controls: refused with a message, nothing committed, the folder unchanged.
# (equality_delete_extra_column: snapshot id 9876543210123456789, past a long's range)
for rel in duckdb-iceberg/big_query_error duckdb-iceberg/generated_bounds \
           duckdb-iceberg/equality_delete_extra_column/warehouse/ns/t \
           duckdb-iceberg/iceberg_v1_deprecated/default/legacy_v1 \
           duckdb-iceberg/legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector; do
    w="$tmp/work/$rel"
    before=$(cd "$w" && find . -type f | LC_ALL=C sort | xargs md5sum)
    if "$FLOE" rewrite "$w" -q -o rewrite-all=true > "$tmp/res" 2> "$tmp/err"; then
        fail "$rel: a rewrite that should be refused succeeded"
    fi
    grep -q "floe:" "$tmp/err" || fail "$rel: no error message"
    after=$(cd "$w" && find . -type f | LC_ALL=C sort | xargs md5sum)
    [ "$before" = "$after" ] || fail "$rel: files changed by a refused rewrite"
    echo "ok $rel refused: $(grep floe: "$tmp/err" | tail -1 | cut -c1-120)"
done
# An empty table: nothing to do.
"$FLOE" rewrite "$tmp/work/duckdb-iceberg/custom_write_paths" -q --json > "$tmp/res.json"
grep -q '"groups_planned":0' "$tmp/res.json" || fail "custom_write_paths: expected an empty plan"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "rewrite_conformance: all ok"
