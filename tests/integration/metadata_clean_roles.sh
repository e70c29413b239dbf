#!/usr/bin/env bash
# metadata_clean_roles.sh - the old-metadata cleanup of a commit
# (write.metadata.delete-after-commit.enabled, floe_table_clean_old_metadata) never
# deletes a file the kept metadata still reaches in another role (issue 21, data loss): it
# deleted every metadata file that dropped off the metadata-log, though another writer's
# metadata named one as a statistics file, a partition statistics file or a snapshot's
# manifest list. Here ns.t keeps 2 log entries (previous-versions-max=2); another writer
# sharing the catalog grafts statistics of S1 naming the oldest log file, partition
# statistics of S2 naming the next, and a snapshot (on no ref) whose manifest list is the
# metadata file it grafts on; three more appends drop all of them off the log:
#  - those three files are kept; the graft's own metadata file, which nothing else names,
#    is still deleted; every row scans and the statistics are still recorded.
# Then ns.u, whose metadata folder is its data folder, gets metadata whose log names its
# live data file, its manifests and a Parquet file named *.metadata.json: a commit keeps
# them all (only a metadata file - by name and by its first bytes - is deleted) and still
# deletes the metadata file the graft was made from.
set -euo pipefail
name=metadata_clean_roles oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
command -v sqlite3 >/dev/null || { echo "$name: SKIP: sqlite3 missing"; exit 77; }

"$floe" table create ns.t --schema "$tmp/s.json" >/dev/null
"$floe" table properties ns.t set write.metadata.previous-versions-max=2 >/dev/null
for k in 1 2; do
  seq $((k * 10 - 9)) $((k * 10)) | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
  "$floe" append ns.t "$tmp/in.ndjson" >/dev/null
done
cur=$(meta ns.t)
read -r log1 log2 <<<"$(mq ns.t "' '.join(e['metadata-file'] for e in m['metadata-log'])")"
[ -n "$log1" ] && [ -n "$log2" ] || { echo "$name: FAIL: setup: metadata-log $log1 $log2" >&2; exit 1; }
[ -e "${log1#file://}" ] && [ -e "${log2#file://}" ] || { echo "$name: FAIL: setup: log files missing" >&2; exit 1; }
graft=${cur%/*}/99999-graft.metadata.json

# another writer's commit: the metadata files in other roles
python3 - "$cur" "$graft" "$log1" "$log2" "file://$cur" <<'PY'
import json, sys
cur, new, log1, log2, cururi = sys.argv[1:]
m = json.load(open(cur))
snaps = sorted(m["snapshots"], key=lambda s: s["sequence-number"])
m["statistics"] = [{"snapshot-id": snaps[0]["snapshot-id"], "statistics-path": log1,
                    "file-size-in-bytes": 10, "file-footer-size-in-bytes": 4, "blob-metadata": []}]
m["partition-statistics"] = [{"snapshot-id": snaps[1]["snapshot-id"], "statistics-path": log2,
                              "file-size-in-bytes": 10}]
odd = dict(snaps[0])
odd.update({"snapshot-id": 999, "manifest-list": cururi})
odd.pop("parent-snapshot-id", None)
m["snapshots"].append(odd)
m["metadata-log"].append({"timestamp-ms": m["last-updated-ms"], "metadata-file": cururi})
json.dump(m, open(new, "w"))
PY
swap t "$graft"

for k in 3 4 5; do
  seq $((k * 10 - 9)) $((k * 10)) | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
  "$floe" append ns.t "$tmp/in.ndjson" >/dev/null 2>"$tmp/append.err" || fail "append $k: $(cat "$tmp/append.err")"
done
[ "$(mq ns.t "sum(e['metadata-file'] in ('$log1', '$log2', 'file://$cur', 'file://$graft') for e in m['metadata-log'])")" = 0 ] ||
  fail "setup: the grafted files are still in the metadata-log: $(mq ns.t "m['metadata-log']")"
kept() { [ -e "${2#file://}" ] || fail "$1 (${2##*/}) was deleted"; }
kept "the oldest log file, S1's statistics" "$log1"
kept "the next log file, S2's partition statistics" "$log2"
kept "the metadata file grafted on, snapshot 999's manifest list" "$cur"
[ ! -e "$graft" ] || fail "the graft's metadata file, named by nothing else, was not deleted"
[ "$(mq ns.t "[s['statistics-path'] for s in m['statistics']] + [s['statistics-path'] for s in m['partition-statistics']]")" = "['$log1', '$log2']" ] ||
  fail "statistics lost: $(mq ns.t "(m['statistics'], m['partition-statistics'])")"
n=$("$floe" scan ns.t 2>"$tmp/scan.err" | wc -l) || true
[ "$n" = 50 ] || fail "scan: $n rows, want 50: $(head -3 "$tmp/scan.err")"

# ns.u writes its metadata beside its data (write.metadata.path = its data folder) and keeps
# one log entry; metadata registered for it (as REST's register with overwrite would take
# it) names in its metadata-log the table's live data file and manifests and a Parquet
# file named decoy.metadata.json. The next commit kept none of those off the log's cut
# before: it deleted the manifests and the data file (adversary adv21f, finding F1).
"$floe" table create ns.u --schema "$tmp/s.json" >/dev/null
udata=$(mq ns.u "m['location']")/data
"$floe" table properties ns.u set "write.metadata.path=$udata" \
  write.metadata.previous-versions-max=1 >/dev/null
seq 1 10 | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
"$floe" append ns.u "$tmp/in.ndjson" >/dev/null
ucur=$(meta ns.u)
live=$(find "${udata#file://}" -name '*.parquet' -o -name '*.avro' | sort)
[ "$(echo "$live" | grep -c .)" -ge 3 ] || fail "setup: ns.u's live files: $live"
cp "$(echo "$live" | grep -m1 '\.parquet$')" "${ucur%/*}/decoy.metadata.json"
ugraft=${ucur%/*}/99999-graft.metadata.json
python3 - "$ucur" "$ugraft" "${ucur%/*}/decoy.metadata.json" $live <<'PY'
import json, sys
cur, new, *victims = sys.argv[1:]
m = json.load(open(cur))
m["metadata-log"] = ([{"timestamp-ms": 1, "metadata-file": "file://" + v} for v in victims] +
                     m["metadata-log"] +
                     [{"timestamp-ms": m["last-updated-ms"], "metadata-file": "file://" + cur}])
json.dump(m, open(new, "w"))
PY
swap u "$ugraft"
seq 11 20 | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
"$floe" append ns.u "$tmp/in.ndjson" >/dev/null 2>"$tmp/append.err" || fail "append ns.u: $(cat "$tmp/append.err")"
for f in $live "${ucur%/*}/decoy.metadata.json"; do kept "a file ns.u's old metadata-log named" "$f"; done
[ ! -e "$ucur" ] || fail "ns.u's metadata file before the graft, off the log, was not deleted"
n=$("$floe" scan ns.u 2>"$tmp/scan.err" | wc -l) || true
[ "$n" = 20 ] || fail "scan ns.u: $n rows, want 20: $(head -3 "$tmp/scan.err")"

[ "$fails" = 0 ] || { echo "$name: $fails failures" >&2; exit 1; }
echo "$name: ok"
