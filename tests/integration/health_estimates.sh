#!/usr/bin/env bash
# health_estimates.sh - floe health's rewrite estimate and storage amplification:
#   - a small table in many partitions: the table-wide rewrite recommendation gives one
#     output file per partition (each is written apart) and says their average size,
#     never "N files of <target>" for more files than the bytes fill at the target size;
#   - with a target the bytes do fill (unpartitioned, write.target-file-size-bytes set),
#     the outputs are ceil(bytes / target), "of up to" the target;
#   - storage amplification = data bytes listed in the table's folders / live bytes in
#     them: a Parquet file appended where it was (outside the table) is reported apart
#     (live_outside_files/bytes) and counted on neither side, so a table without orphans
#     is 1.00x, and one whose only file is outside has no ratio (null), not 0.x.
set -euo pipefail
name=health_estimates oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

"$floe" gen --schema-out "$tmp/ev.json" >/dev/null
"$floe" gen --count 3000 --seed 4 -o "$tmp/ev.ndjson" >/dev/null
split -l 300 -d "$tmp/ev.ndjson" "$tmp/evb."
"$floe" table create ns.ev --schema "$tmp/ev.json" --partition 'event_type' >/dev/null
for f in "$tmp"/evb.*; do "$floe" append ns.ev "$f" >/dev/null; done
"$floe" health ns.ev --json > "$tmp/ev.json.out"
python3 - "$tmp/ev.json.out" <<'PY' || fail "partitioned estimate"
import json, math, sys
d = json.load(open(sys.argv[1]))
parts = d["current"]["partitions"]
recs = [r for r in d["recommendations"] if r["kind"] == "rewrite-table"]
assert len(recs) == 1, d["recommendations"]
r = recs[0]
assert 1 <= r["after"] <= len(parts), (r, len(parts))
assert "512 MB" not in r["reason"].split("under")[1], r["reason"]
assert "on average" in r["reason"], r["reason"]
print("partitioned:", r["reason"])
PY

"$floe" table create ns.flat --schema "$tmp/ev.json" --property write.target-file-size-bytes=100000 >/dev/null
for f in "$tmp"/evb.0*; do "$floe" append ns.flat "$f" >/dev/null; done
"$floe" health ns.flat --json > "$tmp/flat.json.out"
python3 - "$tmp/flat.json.out" <<'PY' || fail "unpartitioned estimate"
import json, math, sys
d = json.load(open(sys.argv[1]))
recs = [r for r in d["recommendations"] if r["kind"] == "rewrite-table"]
assert len(recs) == 1, d["recommendations"]
r = recs[0]
small = sum(p["files"]["small_bytes"] for p in d["current"]["partitions"])
want = math.ceil(small / 100000)
assert r["after"] == want, (r, small, want)
assert "of up to 0.09537 MB" in r["reason"], r["reason"]
print("unpartitioned:", r["reason"])
PY

# storage amplification with a file outside the table
echo '{"k":"a","v":1}' > "$tmp/o.ndjson"
mkdir -p "$tmp/ext"
"$floe" convert --schema "$tmp/s.json" -o "$tmp/ext" "$tmp/o.ndjson" >/dev/null
ext=$tmp/ext/part-00000.parquet
"$floe" table create ns.o --schema "$tmp/s.json" >/dev/null
"$floe" append ns.o "$ext" >/dev/null
"$floe" health ns.o --json > "$tmp/o1.json"
"$floe" append ns.o "$tmp/o.ndjson" >/dev/null
"$floe" health ns.o --json > "$tmp/o2.json"
"$floe" health ns.o > "$tmp/o2.txt"
python3 - "$tmp/o1.json" "$tmp/o2.json" "$(stat -c %s "$ext")" <<'PY' || fail "storage amplification"
import json, sys
ext = int(sys.argv[3])
c1 = json.load(open(sys.argv[1]))["churn"]
assert c1["live_outside_files"] == 1 and c1["live_outside_bytes"] == ext, c1
assert c1["disk_data_bytes"] == 0 and c1["storage_amplification"] is None, c1
c2 = json.load(open(sys.argv[2]))["churn"]
assert c2["live_outside_files"] == 1 and c2["live_outside_bytes"] == ext, c2
inside = c2["live_bytes"] - ext
assert inside > 0 and c2["disk_data_bytes"] == inside, c2
assert c2["storage_amplification"] == 1, c2
PY
grep -q 'of those outside the table .* in 1 file (not counted in the amplification)' "$tmp/o2.txt" ||
  fail "the text report does not show the outside file: $(grep -A2 'live data' "$tmp/o2.txt")"
grep -q 'storage amplification (disk / live) 1.00x' "$tmp/o2.txt" || fail "text: $(grep amplification "$tmp/o2.txt")"

[ $fails = 0 ] || exit 1
echo "$name: ok"
