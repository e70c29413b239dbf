#!/usr/bin/env bash
# expire_stats_roles.sh - floe expire deletes a file only when nothing the kept metadata
# reaches names it, in any role (adversary finding N1 on issue 21, data loss): a commit
# may name one file in two roles - a statistics-path that is the current manifest list, a
# live manifest or data file, a metadata file; a kept snapshot's statistics file that is an
# expired snapshot's manifest list - and expire deleted it as "the statistics (or the
# manifest list) of an expired snapshot", so the table no longer read. Here another
# writer sharing the catalog grafts such statistics into table ns.t (4 appends, S1..S4);
# floe expire --retain-last 1 (S1..S3 go):
#  - keeps S4's manifest list, a live manifest, a live data file, a metadata-log file and
#    the metadata file it expired from (statistics of S1..S3), and S3's manifest list
#    (S4's statistics), and every row still scans;
#  - still deletes what only the expired snapshots reach: S1's and S2's manifest lists
#    and S3's own partition statistics file.
set -euo pipefail
name=expire_stats_roles oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
command -v sqlite3 >/dev/null || { echo "$name: SKIP: sqlite3 missing"; exit 77; }

"$floe" table create ns.t --schema "$tmp/s.json" >/dev/null
for k in 1 2 3 4; do
  seq $((k * 10 - 9)) $((k * 10)) | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
  "$floe" append ns.t "$tmp/in.ndjson" >/dev/null
done
dir=$tmp/wh/ns/t
cur=$(meta ns.t)
lists=$(mq ns.t "' '.join(s['manifest-list'] for s in sorted(m['snapshots'], key=lambda s: s['sequence-number']))")
read -r l1 l2 l3 l4 <<<"$lists"
manifest=$(find "$dir/metadata" -name '*-m[0-9]*.avro' | head -1)
datafile=$(find "$dir/data" -name '*.parquet' | head -1)
oldmeta=$(find "$dir/metadata" -name '00000-*.metadata.json' | head -1)
graft=${cur%/*}/99999-graft.metadata.json
ownstats=$dir/metadata/s3-partition-stats.parquet
printf 'stats' > "$ownstats"
[ -n "$manifest" ] && [ -n "$datafile" ] && [ -n "$oldmeta" ] || fail "setup: files not found"

# another writer's commit: statistics naming the table's own files in other roles
python3 - "$cur" "$graft" "$l4" "file://$manifest" "file://$datafile" "file://$oldmeta" \
  "file://$graft" "$l3" "file://$ownstats" <<'PY'
import json, sys
cur, new, l4, manifest, data, oldmeta, graft, l3, own = sys.argv[1:]
m = json.load(open(cur))
ids = [s["snapshot-id"] for s in sorted(m["snapshots"], key=lambda s: s["sequence-number"])]
def st(i, path):
    return {"snapshot-id": ids[i], "statistics-path": path, "file-size-in-bytes": 10,
            "file-footer-size-in-bytes": 4, "blob-metadata": []}
def pst(i, path):
    return {"snapshot-id": ids[i], "statistics-path": path, "file-size-in-bytes": 10}
m["statistics"] = [st(0, l4), st(1, manifest), st(2, graft), st(3, l3)]
m["partition-statistics"] = [pst(0, data), pst(1, oldmeta), pst(2, own)]
m["metadata-log"].append({"timestamp-ms": m["last-updated-ms"], "metadata-file": "file://" + cur})
json.dump(m, open(new, "w"))
PY
swap t "$graft"

rc=0
"$floe" expire ns.t --older-than 0s --retain-last 1 --json > "$tmp/expire.json" 2> "$tmp/expire.err" || rc=$?
[ $rc = 0 ] || fail "expire: exit $rc: $(cat "$tmp/expire.err")"
[ "$(mq ns.t "len(m['snapshots'])")" = 1 ] || fail "expire left $(mq ns.t "len(m['snapshots'])") snapshots, want 1"
kept() { [ -e "${2#file://}" ] || fail "$1 (${2##*/}) was deleted"; }
kept "S4's manifest list, S1's statistics" "$l4"
kept "a live manifest, S2's statistics" "$manifest"
kept "a live data file, S1's partition statistics" "$datafile"
kept "a metadata-log file, S2's partition statistics" "$oldmeta"
kept "the metadata file expire started from, S3's statistics" "$graft"
kept "S3's manifest list, S4's statistics" "$l3"
gone() { [ ! -e "${2#file://}" ] || fail "$1 (${2##*/}) was not deleted"; }
gone "S1's manifest list" "$l1"
gone "S2's manifest list" "$l2"
gone "S3's own partition statistics file" "$ownstats"
n=$("$floe" scan ns.t 2>"$tmp/scan.err" | wc -l) || true
[ "$n" = 40 ] || fail "scan: $n rows, want 40: $(head -3 "$tmp/scan.err")"

[ "$fails" = 0 ] || { echo "$name: $fails failures" >&2; exit 1; }
echo "$name: ok"
