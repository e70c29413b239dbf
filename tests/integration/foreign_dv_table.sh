#!/usr/bin/env bash
# foreign_dv_table.sh - a format v3 table whose deletion vectors another writer made (issue
# 23): tests/data/foreign-dv/pyiceberg/multi_blob_deletion_vectors (PyIceberg data files and
# manifests, one Puffin file holding two deletion-vector-v1 blobs; ORIGIN.md there), its
# table metadata written by this script from its maker's snapshots.
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

kept=$src/tests/data/foreign-dv/pyiceberg/multi_blob_deletion_vectors
recorded=data/persistent/multi_blob_deletion_vectors/warehouse/default/multi_blob_deletion_vectors
# The kept folder holds its maker's data files, manifests, manifest lists and Puffin file;
# its table metadata is written here from the maker's facts (ORIGIN.md says why): schema,
# the three snapshots with their manifest lists, and the table's relative location.
t=$tmp/multi_blob_deletion_vectors
cp -r "$kept" "$t" && chmod -R u+w "$t" || die "copy of $kept"
python3 - "$t/metadata" "$recorded" <<'PY' || die "writing the table metadata"
import json, sys
meta, loc = sys.argv[1], sys.argv[2]
def snapshot(sid, parent, seq, ms, mlist, op, **totals):
    s = {"snapshot-id": sid, "sequence-number": seq, "timestamp-ms": ms,
         "manifest-list": f"{loc}/metadata/{mlist}", "schema-id": 0,
         "summary": {"operation": op, **{k.replace("_", "-"): str(v) for k, v in totals.items()}}}
    if parent:
        s["parent-snapshot-id"] = parent
    return s
snaps = [
    snapshot(4008342791228255080, None, 1, 1784206297629,
             "snap-4008342791228255080-0-aeff6b64-fd21-4e4d-9808-356eb50b96a5.avro", "append",
             added_data_files=1, added_records=3, total_data_files=1, total_records=3),
    snapshot(6085737399650530681, 4008342791228255080, 2, 1784206297637,
             "snap-6085737399650530681-0-6a3b52ad-e883-4912-9187-bc11bc6a0740.avro", "append",
             added_data_files=1, added_records=3, total_data_files=2, total_records=6),
    snapshot(7777777777777777777, 6085737399650530681, 3, 1784206297638,
             "snap-multiple-deletion-vectors.avro", "delete", added_delete_files=2,
             added_position_deletes=3, total_delete_files=2, total_position_deletes=3,
             total_data_files=2, total_records=6),
]
fields = [{"id": 1, "name": "id", "type": "long", "required": True},
          {"id": 2, "name": "source", "type": "string", "required": True}]
doc = {
    "format-version": 3, "table-uuid": "7717e558-d070-4345-96e7-b798a1499236",
    "location": loc, "last-sequence-number": 3, "last-updated-ms": 1784206297638,
    "last-column-id": 2, "next-row-id": 6,
    "schemas": [{"type": "struct", "schema-id": 0, "fields": fields}], "current-schema-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": []}], "default-spec-id": 0,
    "last-partition-id": 999, "properties": {},
    "sort-orders": [{"order-id": 0, "fields": []}], "default-sort-order-id": 0,
    "snapshots": snaps, "current-snapshot-id": snaps[-1]["snapshot-id"],
    "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in snaps],
    "metadata-log": [],
    "refs": {"main": {"snapshot-id": snaps[-1]["snapshot-id"], "type": "branch"}},
}
with open(f"{meta}/00003-multi-blob.metadata.json", "w") as f:
    json.dump(doc, f, indent=1)
with open(f"{meta}/version-hint.text", "w") as f:
    f.write("00003-multi-blob")
PY
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
cp -r "$t" "$tmp/t"
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
