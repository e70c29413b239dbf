#!/usr/bin/env bash
# The Parquet reader against independent readers: every file of parquet-testing/data is
# printed by `floe cat --canonical` and by tests/js/read_parquet.mjs (DuckDB, or hyparquet
# where DuckDB cannot read the file), and the two canonical NDJSON dumps must be equal
# (tests/js/compare.mjs). Also: bad_data and corrupt-checksum files fail with exit 1 and
# no sanitizer report, `floe inspect --json` is valid JSON for every file, and the cat
# options (--columns, --where, --limit, --format csv) behave.
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
here=$(cd "$(dirname "$0")" && pwd)
js=$here/../js
conf=${FLOE_CONFORMANCE:-$here/../../../shared/conformance}
data=$conf/parquet-testing/data
bad=$conf/parquet-testing/bad_data
[ -d "$data" ] || { echo "FAIL: missing $data" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
failures=0
# a sanitizer report must not look like an ordinary failure (exit 1)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98

# Files floe cannot read (none: every feature these files use is in scope).
EXPECTED_UNSUPPORTED=""
# Pages with a wrong CRC: floe must refuse them with a checksum error.
CORRUPT_CHECKSUM="datapage_v1-corrupt-checksum rle-dict-uncompressed-corrupt-checksum"
# DuckDB 1.x cannot decompress these (Hadoop LZ4 framing and the legacy raw LZ4 layout):
# compared against hyparquet instead.
HYPARQUET_ONLY="hadoop_lz4_compressed non_hadoop_lz4_compressed"
# The oracle's own schema derivation fails on these (FLOAT16 read as fixed[2], two-level
# and unannotated repeated lists): it is given floe's Iceberg mapping of the file instead
# (--schema), so the types are still checked against what the oracle's reader returns.
WITH_FLOE_SCHEMA="float16_nonzeros_and_nans float16_zeros_and_nans floating_orders_nan_count
  old_list_structure repeated_no_annotation repeated_primitive_no_list"
# Special cases, checked below: int96_from_spark (DuckDB wraps INT96 beyond int64 nanos),
# map_no_value (a MAP without values: no reader agrees on its shape).
SPECIAL="int96_from_spark map_no_value"
# Checked elsewhere: pages over 1 GiB, read only with --max-page-size (large_page.sh).
ELSEWHERE="large_string_map.brotli"

has() { case " $(echo $1) " in *" $2 "*) return 0 ;; esac; return 1; }

compared=0
# oracle_cmp B READER: floe's rows of B against the oracle's ($tmp/B.oracle, or the
# reader's error in $tmp/B.oerr)
oracle_cmp() {
    local b=$1 reader=$2
    if [ ! -f "$tmp/$b.oracle" ]; then
        fail "$b: oracle $reader failed: $(head -c 300 "$tmp/$b.oerr" 2>/dev/null)"
        return
    fi
    node "$js/compare.mjs" "$tmp/$b.floe" "$tmp/$b.oracle" > "$tmp/$b.cmp" 2>&1 \
        || fail "$b: floe differs from $reader: $(head -c 600 "$tmp/$b.cmp")"
    compared=$((compared + 1))
}
# The files read with their own schema (none given) go to each reader in one process
# after the loop, each to its own .oracle: starting node and loading DuckDB took most of
# this test's time when it was once per file.
declare -A batch=([duckdb]= [hyparquet]=)
for f in "$data"/*.parquet; do
    b=$(basename "$f" .parquet)
    has "$ELSEWHERE" "$b" && continue
    set +e
    "$FLOE" cat "$f" --canonical > "$tmp/$b.floe" 2> "$tmp/$b.err"
    rc=$?
    set -e
    if has "$CORRUPT_CHECKSUM" "$b"; then
        [ $rc -eq 1 ] && grep -q checksum "$tmp/$b.err" || fail "$b: want a checksum error (rc $rc)"
        continue
    fi
    if has "$EXPECTED_UNSUPPORTED" "$b"; then
        [ $rc -eq 1 ] && grep -q 'unsupported: ' "$tmp/$b.err" || fail "$b: want unsupported"
        continue
    fi
    [ $rc -eq 0 ] || { fail "$b: floe cat exit $rc: $(cat "$tmp/$b.err")"; continue; }
    "$FLOE" inspect --json "$f" > "$tmp/$b.inspect" || fail "$b: inspect failed"
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$tmp/$b.inspect" \
        || fail "$b: inspect --json is not JSON"
    has "$SPECIAL" "$b" && continue
    reader=duckdb
    has "$HYPARQUET_ONLY" "$b" && reader=hyparquet
    if ! has "$WITH_FLOE_SCHEMA" "$b"; then
        batch[$reader]+=" $b"
        continue
    fi
    node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
             if (!d.iceberg_schema) process.exit(1);
             require("fs").writeFileSync(process.argv[2], JSON.stringify(d.iceberg_schema))' \
        "$tmp/$b.inspect" "$tmp/$b.schema.json" || { fail "$b: no Iceberg mapping"; continue; }
    if ! node "$js/read_parquet.mjs" --reader $reader --schema "$tmp/$b.schema.json" "$f" \
        > "$tmp/$b.oracle" 2> "$tmp/$b.oerr"; then
        fail "$b: oracle $reader failed: $(head -c 300 "$tmp/$b.oerr")"
        continue
    fi
    oracle_cmp "$b" "$reader"
done
for reader in duckdb hyparquet; do
    files=()
    for b in ${batch[$reader]}; do files+=("$data/$b.parquet"); done
    [ ${#files[@]} -gt 0 ] || continue
    # exit 1 when a file failed: its .oerr, and no .oracle, make oracle_cmp fail for it
    node "$js/read_parquet.mjs" --reader $reader --out-dir "$tmp" "${files[@]}" \
        2> "$tmp/batch.$reader.err" || true
    for b in ${batch[$reader]}; do
        [ -f "$tmp/$b.oracle" ] || [ -f "$tmp/$b.oerr" ] ||
            echo "error: read_parquet.mjs --out-dir stopped: $(head -c 300 "$tmp/batch.$reader.err")" > "$tmp/$b.oerr"
        oracle_cmp "$b" "$reader"
    done
done
[ $compared -ge 45 ] || fail "only $compared files compared"

# int96_from_spark: DuckDB agrees on the rows inside int64 nanoseconds; the last row
# (year 290000) is where it wraps, so it is checked against the value Spark wrote.
node "$js/read_parquet.mjs" --reader duckdb "$data/int96_from_spark.parquet" | head -5 > "$tmp/i96.oracle"
head -5 "$tmp/int96_from_spark.floe" > "$tmp/i96.floe"
node "$js/compare.mjs" "$tmp/i96.floe" "$tmp/i96.oracle" >/dev/null || fail "int96 rows 1-5 differ"
[ "$(sed -n 6p "$tmp/int96_from_spark.floe")" = '{"a":"+290000-12-30T23:00:00.000000000"}' ] \
    || fail "int96 row 6: $(sed -n 6p "$tmp/int96_from_spark.floe")"

# map_no_value: the two well-formed columns against DuckDB (schema without the odd map),
# the value-less map against hyparquet's key lists.
cat > "$tmp/mnv.schema.json" <<'EOF'
{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"my_map","required":true,"type":{"type":"map","key-id":2,"key":"int","value-id":3,"value":"int","value-required":false}},
 {"id":4,"name":"my_list","required":true,"type":{"type":"list","element-id":5,"element":"int","element-required":true}}]}
EOF
"$FLOE" cat "$data/map_no_value.parquet" --canonical --columns my_map,my_list > "$tmp/mnv.floe"
node "$js/read_parquet.mjs" --reader hyparquet --schema "$tmp/mnv.schema.json" \
    "$data/map_no_value.parquet" > "$tmp/mnv.oracle"
node "$js/compare.mjs" "$tmp/mnv.floe" "$tmp/mnv.oracle" >/dev/null || fail "map_no_value my_map/my_list"
"$FLOE" cat "$data/map_no_value.parquet" --canonical --columns my_map_no_v > "$tmp/mnv2.floe"
(cd "$js" && node -e '
  import("hyparquet").then(async (h) => {
    const b = require("fs").readFileSync(process.argv[1])
    await h.parquetRead({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.length), rowFormat: "object",
      onComplete: (rows) => { for (const r of rows)
        console.log(JSON.stringify({ my_map_no_v: r.my_map_no_v.key_value.map((e) => [e.key, null]) })) } })
  })' "$data/map_no_value.parquet") > "$tmp/mnv2.oracle"
cmp -s "$tmp/mnv2.floe" "$tmp/mnv2.oracle" || fail "map_no_value my_map_no_v: $(head -2 "$tmp/mnv2.floe")"

# bad_data: exit 1 with a message naming the file; ARROW-GH-43605 (RLE bit width 0 over
# a one-entry dictionary) is legal and reads as zeros, as in DuckDB.
for f in "$bad"/*.parquet; do
    b=$(basename "$f")
    set +e
    timeout 60 "$FLOE" cat "$f" > "$tmp/bad.out" 2> "$tmp/bad.err"
    rc=$?
    set -e
    if [ "$b" = ARROW-GH-43605.parquet ]; then
        [ $rc -eq 0 ] && [ "$(sort -u "$tmp/bad.out")" = '{"min_fl":0}' ] || fail "$b: rc $rc"
    else
        [ $rc -eq 1 ] && grep -q "$b" "$tmp/bad.err" || fail "$b: want exit 1, got $rc: $(head -c 300 "$tmp/bad.err")"
    fi
done

# cat options
nl="$data/nullable.impala.parquet"
[ "$("$FLOE" cat "$nl" --columns id --limit 2)" = $'{"id":1}\n{"id":2}' ] || fail "cat --columns --limit"
[ "$("$FLOE" cat "$nl" --columns id --where 'id >= 3 AND NOT id IN (4, 5)')" = $'{"id":3}\n{"id":6}\n{"id":7}' ] \
    || fail "cat --where"
"$FLOE" cat "$nl" --format csv --columns id,nested_struct --limit 1 > "$tmp/c.csv"
[ "$(head -1 "$tmp/c.csv")" = "id,nested_struct" ] || fail "csv header"
[ "$(wc -l < "$tmp/c.csv")" -eq 2 ] || fail "csv rows"
"$FLOE" cat "$data/alltypes_tiny_pages_plain.parquet" --where 'id = 100' --stats > "$tmp/p.out" 2> "$tmp/p.stats"
[ "$(wc -l < "$tmp/p.out")" -eq 1 ] || fail "tiny pages: want 1 row"
grep -q '"pages_skipped":[1-9]' "$tmp/p.stats" || fail "tiny pages: no page skipped: $(cat "$tmp/p.stats")"
set +e
"$FLOE" cat "$nl" --where 'id ==' >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --where should exit 2"
"$FLOE" cat >/dev/null 2>&1; [ $? -eq 2 ] || fail "cat without FILE should exit 2"
"$FLOE" inspect "$tmp/missing.parquet" >/dev/null 2>&1; [ $? -eq 1 ] || fail "inspect of a missing file should exit 1"
set -e

[ $failures -eq 0 ] || { echo "pq_reader_oracles: $failures failures" >&2; exit 1; }
echo "pq_reader_oracles: ok ($compared files compared value for value)"
