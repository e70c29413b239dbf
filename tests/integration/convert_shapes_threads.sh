#!/usr/bin/env bash
# convert_shapes_threads.sh - `floe convert` of bench/shapes' event shapes (iot: numeric,
# wide: 125 sparse fields, nested: lists of structs, maps) on 1, 2 and 3 threads.
#
#  1. the files are byte-identical whatever the thread count (the pipeline writes batches
#     in input order and the column encoding does not depend on which thread ran it),
#     with the default row group and with small row groups and pages (several row
#     groups, many pages a column chunk); every input line is a row.
#  2. a larger file (24 MB of iot, six 4 MiB chunks): its last row group is ended early in
#     steps (floe_convert_options.input_size, known for files), still byte-identical on 1
#     and 2 threads; from standard input (size unknown) one row group with the same rows.
# convert_malloc_tunables.sh checks the malloc settings convert runs with.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "convert_shapes_threads: FAIL: $*" >&2; exit 1; }
command -v python3 > /dev/null || { echo "convert_shapes_threads: no python3: skipped"; exit 77; }

for shape in iot wide nested; do
  schema=$src/bench/shapes/$shape.schema.json
  python3 "$src/bench/shapes/gen.py" "$shape" 3M "$tmp/$shape.ndjson" > /dev/null
  lines=$(grep -c . "$tmp/$shape.ndjson")
  for opts in "" "--row-group-size 512KB --page-size 16KB"; do
    for t in 1 2 3; do
      # shellcheck disable=SC2086 # opts is a list of options
      "$floe" convert --schema "$schema" -j "$t" $opts "$tmp/$shape.ndjson" -o "$tmp/$shape-$t" \
        > /dev/null || fail "$shape, $t threads ($opts): convert failed"
      [ "$(find "$tmp/$shape-$t" -name '*.parquet' | wc -l)" -eq 1 ] ||
        fail "$shape, $t threads ($opts): not one file"
    done
    rows=$("$floe" cat "$tmp/$shape-1/part-00000.parquet" | wc -l)
    [ "$rows" -eq "$lines" ] || fail "$shape ($opts): $rows rows for $lines lines"
    for t in 2 3; do
      cmp "$tmp/$shape-1/part-00000.parquet" "$tmp/$shape-$t/part-00000.parquet" ||
        fail "$shape ($opts): 1 and $t threads wrote different bytes"
    done
    rm -rf "$tmp/$shape"-[123]
  done
done
schema=$src/bench/shapes/iot.schema.json
python3 "$src/bench/shapes/gen.py" iot 24M "$tmp/big.ndjson" > /dev/null
lines=$(grep -c . "$tmp/big.ndjson")
for t in 1 2; do
  "$floe" convert --schema "$schema" -j "$t" "$tmp/big.ndjson" -o "$tmp/big-$t" > /dev/null ||
    fail "24 MB, $t threads: convert failed"
done
cmp "$tmp/big-1/part-00000.parquet" "$tmp/big-2/part-00000.parquet" ||
  fail "24 MB: 1 and 2 threads wrote different bytes"
"$floe" convert --schema "$schema" -j 2 - -o "$tmp/big-stdin" < "$tmp/big.ndjson" > /dev/null ||
  fail "24 MB from standard input: convert failed"
"$floe" inspect --json "$tmp/big-1/part-00000.parquet" > "$tmp/big-1.json"
"$floe" inspect --json "$tmp/big-stdin/part-00000.parquet" > "$tmp/big-stdin.json"
python3 - "$tmp/big-1.json" "$tmp/big-stdin.json" "$lines" <<'PY' || fail "24 MB: row groups"
import json, sys
sized = [g["num_rows"] for g in json.load(open(sys.argv[1]))["row_groups"]]
unsized = [g["num_rows"] for g in json.load(open(sys.argv[2]))["row_groups"]]
lines = int(sys.argv[3])
assert sum(sized) == lines and unsized == [lines], (sized, unsized, lines)
# ended in steps: each row group holds at least about twice what follows it
assert len(sized) >= 2, sized
for i in range(len(sized) - 1):
    assert sized[i] * 10 >= sum(sized[i + 1:]) * 17, sized
PY
"$floe" cat "$tmp/big-1/part-00000.parquet" > "$tmp/big-1.rows"
"$floe" cat "$tmp/big-stdin/part-00000.parquet" > "$tmp/big-stdin.rows"
cmp -s "$tmp/big-1.rows" "$tmp/big-stdin.rows" || fail "24 MB: file and standard input rows differ"
echo "convert_shapes_threads: ok"
