#!/usr/bin/env bash
# cli_long_errors.sh - a long error message reaches the user whole: its reason and byte
# offset are never the part cut off, nor the data file's name. A table whose warehouse
# lies under a long folder (~750 bytes) holds parquet-testing's
# rle-dict-uncompressed-corrupt-checksum.parquet (a dictionary page whose CRC is wrong);
# floe rewrite fails on that page. Its message names the data file and the page: "...
# <file>: row group 0: column long_field: page at offset 4: checksum mismatch ...". It was
# cut at 192 bytes (a rewrite group's reason) and again at 256 ("first failure"), so even
# under a short folder it stopped at "column long_field:" and never said why; the error
# itself (768 bytes) was cut before the reason when a path was long. Checked on stderr
# (without and with partial progress), in the text result's "first failure" line and in
# --json's first_failure. (A message longer than any buffer loses its middle, marked:
# test_common's test_error_long_message.)
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
conf=${FLOE_CONFORMANCE:-$src/../shared/conformance}
bad=$conf/parquet-testing/data/rle-dict-uncompressed-corrupt-checksum.parquet
[ -f "$bad" ] || { echo "cli_long_errors: no $bad, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "cli_long_errors: FAIL: $*" >&2; fails=$((fails + 1)); }
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true

seg=$(printf 'folder%.0s' $(seq 30)) # 180 bytes: a name well under NAME_MAX
reason="row group 0: column long_field: page at offset 4: checksum mismatch"

# table_under DIR: a table ns.t whose warehouse is DIR/wh (the catalog database stays
# short: SQLite opens no path over 512 bytes), holding the corrupt file as it is
table_under() {
    mkdir -p "$1"
    rm -f "$tmp/catalog.db"
    export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$1/wh" FLOE_CATALOG=cc
    "$floe" namespace create ns > /dev/null
    "$floe" inspect "$bad" > "$tmp/insp.txt"
    sed -n 's/^iceberg schema: //p' "$tmp/insp.txt" > "$tmp/s.json"
    "$floe" table create ns.t --schema "$tmp/s.json" \
        --property write.parquet.compression-codec=uncompressed > /dev/null
    cp "$bad" "$1/in.parquet"
    "$floe" append ns.t "$1/in.parquet" --copy --skip-page-crc > /dev/null
    "$floe" files ns.t --json > "$tmp/files.json"
    data=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['path'])" \
        "$tmp/files.json")
}

# 4 x 181 bytes of folders (a catalog keeps metadata locations of up to 1,000 bytes): the
# message, which names the file's path twice, is ~1,700 bytes
long="$tmp"
for _ in 1 2 3 4; do long="$long/$seg"; done
table_under "$long"
[ "${#data}" -gt 750 ] || fail "the data file's path is only ${#data} bytes"

rc=0
"$floe" rewrite ns.t -o rewrite-all=true -o fast-copy=false > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "rewrite: exit $rc, want 1"
line=$(grep '^floe: rewrite: group' "$tmp/err" || true)
case "$line" in
*"$data: $reason"*) ;;
*) fail "rewrite: the error does not name the file and the page whole: $(tail -c 300 "$tmp/err")" ;;
esac

# partial progress: the group fails alone; its reason in the summary and on stderr
rc=0
"$floe" rewrite ns.t -o rewrite-all=true -o fast-copy=false -o partial-progress.enabled=true \
    > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "partial progress: exit $rc, want 1"
grep -q "^first failure: group [0-9]*: .*$data: $reason" "$tmp/out" ||
    fail "partial progress: 'first failure' cut: $(grep 'first failure' "$tmp/out" | tail -c 200)"
grep -q "^floe: 1 group(s) failed; group [0-9]*: .*$data: $reason" "$tmp/err" ||
    fail "partial progress: stderr cut: $(tail -c 200 "$tmp/err")"
"$floe" rewrite ns.t -o rewrite-all=true -o fast-copy=false -o partial-progress.enabled=true \
    --json > "$tmp/out.json" 2> /dev/null || true
ff=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['first_failure'])" \
    "$tmp/out.json")
case "$ff" in
*"$data: $reason"*) ;;
*) fail "--json first_failure cut: ...$(echo "$ff" | tail -c 200)" ;;
esac

[ "$fails" = 0 ] || exit 1
echo "cli_long_errors: ok"
