#!/usr/bin/env bash
# register_confine.sh - floe table register holds the registered metadata to the rule a
# commit through floe catalog serve follows (issue 21, data safety; floe/table.h
# "Confinement"): a metadata file whose statistics or partition statistics file, or whose
# snapshot's manifest list, lies outside the table's location (here: another table's data
# file and manifest list) is refused, naming the file, and nothing is registered; the
# table's own files register as before. (rest_commit_paths.sh checks the server's
# register endpoint the same way.)
set -euo pipefail
name=register_confine oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"

"$floe" table create ns.victim --schema "$tmp/s.json" >/dev/null
seq 5 | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
"$floe" append ns.victim "$tmp/in.ndjson" >/dev/null
vdata=file://$(find "$tmp/wh/ns/victim/data" -name '*.parquet' | head -1)
vlist=$(mq ns.victim "m['snapshots'][-1]['manifest-list']")
vmeta=$(meta ns.victim)

# make FILE KIND: victim's metadata moved to the folder $tmp/wh/ns/reg, its snapshot
# dropped, naming victim's files by KIND (stats, pstats, list) or none (own)
make() {
  mkdir -p "$tmp/wh/ns/reg/metadata"
  python3 - "$vmeta" "$tmp/wh/ns/reg/metadata/$1" "$2" "file://$tmp/wh/ns/reg" "$vdata" "$vlist" <<'PY'
import json, sys
src, out, kind, loc, vdata, vlist = sys.argv[1:]
m = json.load(open(src))
snap = m["snapshots"][-1]
m.update({"location": loc, "snapshots": [], "snapshot-log": [], "refs": {},
          "current-snapshot-id": -1, "metadata-log": []})
stat = {"snapshot-id": snap["snapshot-id"], "statistics-path": vdata,
        "file-size-in-bytes": 10, "file-footer-size-in-bytes": 4, "blob-metadata": []}
if kind == "stats":
    m["statistics"] = [stat]
elif kind == "pstats":
    stat.pop("file-footer-size-in-bytes"); stat.pop("blob-metadata")
    m["partition-statistics"] = [stat]
elif kind == "list":
    snap["manifest-list"] = vlist
    m.update({"snapshots": [snap], "current-snapshot-id": snap["snapshot-id"],
              "refs": {"main": {"snapshot-id": snap["snapshot-id"], "type": "branch"}}})
json.dump(m, open(out, "w"))
PY
}
for kind in stats pstats list; do
  make "00001-$kind.metadata.json" $kind
  rc=0
  "$floe" table register ns.reg "file://$tmp/wh/ns/reg/metadata/00001-$kind.metadata.json" \
    > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ $rc != 0 ] || fail "register naming victim's files ($kind) was taken"
  case $kind in list) want=$vlist ;; *) want=$vdata ;; esac
  grep -qF "$want" "$tmp/err" || fail "register ($kind): the error does not name $want: $(cat "$tmp/err")"
  grep -q "lies outside the table's location" "$tmp/err" || fail "register ($kind): $(cat "$tmp/err")"
  if "$floe" table describe ns.reg --json >/dev/null 2>&1; then
    fail "a refused register ($kind) made ns.reg"
    "$floe" table drop ns.reg >/dev/null 2>&1 || true
  fi
done
make 00002-own.metadata.json own
"$floe" table register ns.reg "file://$tmp/wh/ns/reg/metadata/00002-own.metadata.json" >/dev/null 2> "$tmp/err" ||
  fail "register of a table's own metadata: $(cat "$tmp/err")"
"$floe" table describe ns.reg --json >/dev/null || fail "ns.reg not registered"
[ "$(meta ns.victim)" = "$vmeta" ] || fail "victim's metadata moved"

[ $fails = 0 ] || exit 1
echo "$name: ok"
