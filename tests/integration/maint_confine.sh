#!/usr/bin/env bash
# maint_confine.sh - floe's deleters delete only inside a table's own folders (adversary
# finding on issue 21, data loss): a table whose metadata names another table's files - a
# snapshot whose manifest list is the other's, a statistics file that is the other's data
# file, written by any writer sharing the catalog - had them deleted by floe expire, and
# so the other table lost its data. Now every deleter keeps what lies outside the
# table's location (and its own write.data.path / write.metadata.path), and says so:
#  1. floe expire of the table expires that snapshot and keeps the other table's files,
#     "kept N files outside the table's location: ..." on stderr and kept_outside in
#     --json; its own expired files are still deleted;
#  2. floe table drop --purge of such a table keeps them too;
#  3. Parquet files appended in place from outside the table's location stay after the
#     rewrite and expiry that replace them (append_copy.sh checks the --help text);
#  4. a table whose write.metadata.path and write.data.path are another table's folders
#     (floe refuses to set them; another writer sharing the catalog did): its commits, expiry and orphan removal leave the
#     other table's files alone (those folders are not taken for the table's own);
# and the other table's files are unchanged byte for byte and its rows scan.
set -euo pipefail
name=maint_confine oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
command -v sqlite3 >/dev/null || { echo "$name: SKIP: sqlite3 missing"; exit 77; }

for t in victim atk gone; do
  "$floe" table create ns.$t --schema "$tmp/s.json" >/dev/null
  for k in 1 2; do
    seq $((k * 10 - 9)) $((k * 10)) | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
    "$floe" append ns.$t "$tmp/in.ndjson" >/dev/null
  done
done
vmeta=$(meta ns.victim)
vlist=$(mq ns.victim "m['snapshots'][-1]['manifest-list']")
vdata=file://$(find "$tmp/wh/ns/victim/data" -name '*.parquet' | head -1)
snap() { (cd "$tmp/wh/ns/victim" && find . -type f | sort | xargs sha256sum); }
snap > "$tmp/victim.before"

# graft TABLE: a snapshot (older than every other) naming victim's manifest list and, as
# its statistics file, one of victim's data files, written into a new metadata file of
# TABLE and swapped into the catalog as another writer would
graft() {
  local cur new
  cur=$(meta "ns.$1")
  new=${cur%/*}/99999-graft.metadata.json
  python3 - "$cur" "$new" "$vlist" "$vdata" <<'PY'
import json, sys
cur, new, vlist, vdata = sys.argv[1:]
m = json.load(open(cur))
first = min(s["timestamp-ms"] for s in m["snapshots"])
m["snapshots"].append({"snapshot-id": 4242, "sequence-number": 1, "timestamp-ms": first - 1000,
                       "manifest-list": vlist, "summary": {"operation": "append"}, "schema-id": 0})
m.setdefault("statistics", []).append({"snapshot-id": 4242, "statistics-path": vdata,
                                       "file-size-in-bytes": 10, "file-footer-size-in-bytes": 4,
                                       "blob-metadata": []})
m["metadata-log"].append({"timestamp-ms": m["last-updated-ms"], "metadata-file": "file://" + cur})
json.dump(m, open(new, "w"))
PY
  swap "$1" "$new"
}

# 1. expire
graft atk
own_list=$(mq ns.atk "sorted(m['snapshots'], key=lambda s: s['timestamp-ms'])[1]['manifest-list']")
rc=0
"$floe" expire ns.atk --older-than 0s --retain-last 1 --json > "$tmp/expire.json" 2> "$tmp/expire.err" || rc=$?
[ $rc = 0 ] || fail "expire: exit $rc: $(cat "$tmp/expire.err")"
grep -q "kept [0-9]* files outside the table's location: .*victim" "$tmp/expire.err" ||
  fail "expire does not say what it kept: $(cat "$tmp/expire.err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kept_outside"] >= 3 and d["snapshots_expired"] == 2, d' \
  "$tmp/expire.json" || fail "expire --json: $(cat "$tmp/expire.json")"
[ ! -e "${own_list#file://}" ] || fail "expire kept the table's own expired manifest list"
[ "$(mq ns.atk "len(m['snapshots'])")" = 1 ] || fail "expire left snapshots"

# 2. drop --purge
graft gone
"$floe" table drop ns.gone --purge > "$tmp/purge.out" 2> "$tmp/purge.err" || fail "drop --purge: $(cat "$tmp/purge.err")"
grep -q "kept [0-9]* files* outside the table's location" "$tmp/purge.err" ||
  fail "drop --purge does not say what it kept: $(cat "$tmp/purge.err")"
[ -z "$(find "$tmp/wh/ns/gone" -type f 2>/dev/null)" ] || fail "drop --purge left the table's own files"

snap > "$tmp/victim.after"
cmp -s "$tmp/victim.before" "$tmp/victim.after" ||
  fail "victim's files changed: $(diff "$tmp/victim.before" "$tmp/victim.after" | head -5)"
[ "$("$floe" scan ns.victim --format canonical | wc -l)" = 20 ] || fail "victim's rows"
[ "$(meta ns.victim)" = "$vmeta" ] || fail "victim's metadata moved"

# 3. Parquet appended in place from outside the location: the table's, but not deleted
mkdir -p "$tmp/in"
python3 -c '[print("{\"k\":\"r%d\",\"v\":%d}" % (j, j)) for j in range(20)]' > "$tmp/p.ndjson"
"$floe" convert --schema "$tmp/s.json" -o "$tmp/in" "$tmp/p.ndjson" >/dev/null
f=$tmp/in/part-00000.parquet
"$floe" table create ns.n --schema "$tmp/s.json" >/dev/null
"$floe" append ns.n "$f" >/dev/null
"$floe" append ns.n "$tmp/p.ndjson" >/dev/null
"$floe" rewrite ns.n -o min-input-files=2 --quiet >/dev/null
"$floe" expire ns.n --older-than 0s --retain-last 1 --json > "$tmp/n.json" 2> "$tmp/n.err"
[ -f "$f" ] || fail "expire deleted the Parquet file appended in place from outside the table"
grep -q "kept 1 file outside the table's location: \(file://\)\?$f" "$tmp/n.err" ||
  fail "expire does not name the file it kept: $(cat "$tmp/n.err")"
[ "$("$floe" scan ns.n --format canonical | wc -l)" = 40 ] || fail "rows of ns.n"

# 4. write paths into another table's folder (a client of a foreign catalog follows them):
#    the deleters do not take that folder for the table's
"$floe" table create ns.w --schema "$tmp/s.json" >/dev/null
# floe itself refuses such paths (write_path_place.sh); another writer sets them
rc=0; "$floe" table properties ns.w set "write.metadata.path=file://$tmp/wh/ns/victim/metadata" \
  "write.data.path=file://$tmp/wh/ns/victim/data" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "floe table properties set write paths into victim's folder: exit $rc"
write_paths_to w "$tmp/wh/ns/victim"
snap > "$tmp/victim.before"
for k in 1 2 3; do
  seq $k | sed 's/.*/{"k":"w","v":&}/' > "$tmp/in.ndjson"
  "$floe" append ns.w "$tmp/in.ndjson" >/dev/null 2>>"$tmp/w.err"
done
"$floe" expire ns.w --older-than 0s --retain-last 1 >/dev/null 2>>"$tmp/w.err"
"$floe" orphans ns.w --older-than 0s --force >/dev/null 2>>"$tmp/w.err"
grep -q "is not a folder of the table's own" "$tmp/w.err" || fail "the write paths were taken for ns.w's: $(cat "$tmp/w.err")"
snap | grep -F -f "$tmp/victim.before" > "$tmp/victim.after" || true
cmp -s "$tmp/victim.before" "$tmp/victim.after" ||
  fail "ns.w's maintenance changed victim's files: $(diff "$tmp/victim.before" "$tmp/victim.after" | head -5)"
[ "$("$floe" scan ns.victim --format canonical | wc -l)" = 20 ] || fail "victim's rows after ns.w's maintenance"
[ "$("$floe" scan ns.w --format canonical | wc -l)" = 6 ] || fail "ns.w's rows"

[ $fails = 0 ] || exit 1
echo "$name: ok"
