#!/bin/sh
# parquet_seeds.sh CORPUS_DIR - copy the Parquet conformance files (data/ and bad_data/) into
# a scratch corpus for fuzz_parquet. The files are never committed to this repository.
set -eu
out=${1:?usage: parquet_seeds.sh CORPUS_DIR}
src=${FLOE_CONFORMANCE:-$(dirname "$0")/../../../shared/conformance}/parquet-testing
mkdir -p "$out"
for f in "$src"/data/*.parquet "$src"/bad_data/*.parquet; do
    cp "$f" "$out/"
done
echo "$(ls "$out" | wc -l) seeds in $out"
