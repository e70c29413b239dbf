#!/usr/bin/env bash
# foreign_dv_table.sh - a format v3 table whose deletion vectors another writer made (issue
# 23): tests/data/foreign-dv/pyiceberg/multi_blob_deletion_vectors (PyIceberg data files and
# manifests, one Puffin file holding two deletion-vector-v1 blobs; ORIGIN.md there).
#
# Checked:
#  1. floe scan reads the rows its maker's test expects (ids 1, 3, 5), row for row, and the
#     same rows an independent reading gives: DuckDB reads each data file with its row
#     numbers, roaring (npm, tests/js/dv_oracle.mjs) reads the Puffin file, the positions
#     of each blob are taken out of the file its manifest entry names;
#  2. the snapshot before the delete reads all 6 rows;
#  3. floe health counts 2 deletion vectors holding 3 deleted rows;
#  4. a copy, its recorded relative paths relocated, rewritten by floe rewrite: the same
#     rows, one data file, no deletion vector live, nothing said about the blobs' own
#     (relative) referenced-data-file properties.
# Every check runs; the script fails with the count of failed checks.
set -uo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] || {
  echo "foreign_dv_table: node and tests/js node_modules needed (scripts/setup --test)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE FLOE_CATALOG_URI FLOE_WAREHOUSE || true
failed=0 checks=0
check() {
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    failed=$((failed + 1))
    printf 'foreign_dv_table: FAIL: %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3" >&2
  fi
}
die() { echo "foreign_dv_table: FAIL: $*" >&2; exit 1; }

t=$src/tests/data/foreign-dv/pyiceberg/multi_blob_deletion_vectors
recorded=data/persistent/multi_blob_deletion_vectors/warehouse/default/multi_blob_deletion_vectors
want='{"id":1,"source":"first"}
{"id":3,"source":"first"}
{"id":5,"source":"second"}'

# 1. floe scan, and the independent reading
"$floe" scan "$t" > "$tmp/scan" 2> "$tmp/scan.err" || die "floe scan: $(cat "$tmp/scan.err")"
check "floe scan rows" "$want" "$(sort "$tmp/scan")"
check "floe scan says nothing" "" "$(cat "$tmp/scan.err")"
node "$js/dv_oracle.mjs" read "$t/data/multiple-deletion-vectors.puffin" > "$tmp/blobs" ||
  die "dv_oracle read"
# DuckDB: every data file's rows with their positions; the blobs' positions taken out of
# the file each manifest entry names (tests/data: the blob names it too, by the same name)
node "$js/duckdb_query.mjs" "SELECT id, source, file_row_number AS pos, parse_filename(filename) AS f
  FROM read_parquet('$t/data/*.parquet', file_row_number = true, filename = true)" \
  > "$tmp/rows" || die "DuckDB read of the data files failed"
oracle=$(python3 - "$tmp/rows" "$tmp/blobs" <<'PY'
import json, sys
deleted = {}
for line in open(sys.argv[2]):
    b = json.loads(line)
    deleted[b["referenced"].rsplit("/", 1)[-1]] = set(b["positions"])
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if int(r["pos"]) not in deleted.get(r["f"], set()):
        out.append(json.dumps({"id": int(r["id"]), "source": r["source"]}, separators=(",", ":")))
print("\n".join(sorted(out)))
PY
) || die "the oracle failed"
check "DuckDB + roaring rows" "$want" "$oracle"
check "blobs in the Puffin file" 2 "$(wc -l < "$tmp/blobs")"

# 2. before the delete: the delete snapshot's parent
"$floe" scan "$t" --snapshot 6085737399650530681 \
  > "$tmp/before" 2>&1 || die "scan before the delete: $(cat "$tmp/before")"
check "rows before the delete" "1 2 3 4 5 6" \
  "$(python3 -c 'import json,sys; print(*sorted(json.loads(l)["id"] for l in sys.stdin))' < "$tmp/before")"

# 3. health
"$floe" health "$t" --json > "$tmp/health" 2>&1 || die "health: $(cat "$tmp/health")"
check "health: deletion vectors, deleted rows" "2 3" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["current"]["files"]["delete_files"]["deletion_vectors"]
print(d["count"], d["records"])' "$tmp/health")"

# 4. a relocated copy, rewritten
cp -r "$t" "$tmp/t" && chmod -R u+w "$tmp/t"
"$floe" rewrite "$tmp/t" --relocate "$recorded=$tmp/t" --option rewrite-all=true \
  > "$tmp/rw" 2> "$tmp/rw.err"
check "rewrite exit status" 0 "$?"
check "rewrite says nothing on stderr" "" "$(grep -v '^rewrote' "$tmp/rw.err")"
"$floe" scan "$tmp/t" > "$tmp/after" 2> "$tmp/after.err"
check "rows after rewrite" "$want" "$(sort "$tmp/after")"
check "scan after rewrite says nothing" "" "$(cat "$tmp/after.err")"
"$floe" health "$tmp/t" --json > "$tmp/health2" 2>&1 || die "health after: $(cat "$tmp/health2")"
check "after rewrite: data files, deletion vectors" "1 0" "$(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["current"]["files"]
print(f["data_files"], f["delete_files"]["deletion_vectors"]["count"])' "$tmp/health2")"

echo "foreign_dv_table: $((checks - failed))/$checks checks passed"
[ "$failed" -eq 0 ]
