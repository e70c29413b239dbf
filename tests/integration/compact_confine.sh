#!/usr/bin/env bash
# compact_confine.sh - the cleanups of floe rewrite and floe rewrite-manifests delete only
# inside the table's own folders (issue 21, data safety; floe/table.h "Confinement"). A
# table whose write.data.path / write.metadata.path another writer sharing the catalog set
# to another table's folders (floe refuses to set them, maint_confine.sh) has its rewrite
# outputs written there; when the commit then fails, the cleanup deleted them in the
# other table's folder directly through the FileIO. Now it keeps what lies outside the
# table's own folders and says so ("kept N files outside the table's location"), as every
# other deleter does; inside them the cleanup still deletes. The same for floe serve's
# landing compaction (the data files it converted, after a failed commit). The commit is made to fail by
# a trigger on the catalog's table row (a refused swap: nothing committed).
set -euo pipefail
name=compact_confine oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
command -v sqlite3 >/dev/null || { echo "$name: SKIP: sqlite3 missing"; exit 77; }
export FLOE_CATALOG=default # floe serve's name for the catalog it is given
"$floe" namespace create ns >/dev/null

for t in victim w own; do
  "$floe" table create ns.$t --schema "$tmp/s.json" >/dev/null
  for k in 1 2 3; do
    seq $((k * 10 - 9)) $((k * 10)) | sed 's/.*/{"k":"a","v":&}/' > "$tmp/in.ndjson"
    "$floe" append ns.$t "$tmp/in.ndjson" >/dev/null
  done
done
files() { (cd "$1" && find . -type f | sort); }
# another writer points ns.w's write paths into victim's folders
write_paths_to w "$tmp/wh/ns/victim"
# every commit to ns.w and ns.own is refused from here on
sqlite3 "$catalog_db" "CREATE TRIGGER refuse BEFORE UPDATE ON iceberg_tables
  WHEN OLD.table_name IN ('w', 'own') BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;"
files "$tmp/wh/ns/victim" > "$tmp/victim.before"
files "$tmp/wh/ns/own" > "$tmp/own.before"

# check WHAT: the failed run wrote into victim's folder and kept it there, and said so
check() {
  files "$tmp/wh/ns/victim" > "$tmp/victim.after"
  local added
  added=$(comm -13 "$tmp/victim.before" "$tmp/victim.after" | grep -c "$2" || true)
  [ "$added" -ge 1 ] || fail "$1: deleted the files it wrote into victim's folder (or wrote none)"
  comm -23 "$tmp/victim.before" "$tmp/victim.after" | grep -q . &&
    fail "$1: victim lost files: $(comm -23 "$tmp/victim.before" "$tmp/victim.after" | head -3)"
  grep -q "kept [0-9]* files* outside the table's location: .*victim" "$tmp/$1.err" ||
    fail "$1 does not say what it kept: $(cat "$tmp/$1.err")"
  cp "$tmp/victim.after" "$tmp/victim.before"
}

# 1. floe rewrite: its data outputs (in victim/data) when the commit fails
rc=0; "$floe" rewrite ns.w -o min-input-files=2 > /dev/null 2> "$tmp/rewrite.err" || rc=$?
[ $rc != 0 ] || fail "rewrite of ns.w committed through the refusing trigger"
check rewrite '^./data/.*\.parquet$'

# 2. floe rewrite-manifests: its manifests and list (in victim/metadata)
rc=0; "$floe" rewrite-manifests ns.w > /dev/null 2> "$tmp/rewrite-manifests.err" || rc=$?
[ $rc != 0 ] || fail "rewrite-manifests of ns.w committed through the refusing trigger"
check rewrite-manifests '^./metadata/.*\.avro$'

# 3. inside the table's own folder the cleanups still delete what they wrote
for cmd in "rewrite ns.own -o min-input-files=2" "rewrite-manifests ns.own"; do
  rc=0; "$floe" $cmd > /dev/null 2> "$tmp/own.err" || rc=$?
  [ $rc != 0 ] || fail "$cmd committed through the refusing trigger"
  files "$tmp/wh/ns/own" | grep -v '\.metadata\.json$' > "$tmp/own.after"
  grep -v '\.metadata\.json$' "$tmp/own.before" | cmp -s - "$tmp/own.after" ||
    fail "$cmd left files behind: $(comm -13 "$tmp/own.before" "$tmp/own.after" | head -3)"
  grep -q "outside the table's location" "$tmp/own.err" && fail "$cmd kept files: $(cat "$tmp/own.err")"
done

# 4. floe serve's landing compaction: the data files it converted into ns.w (in
#    victim/data) when the commit fails
if command -v curl >/dev/null; then
  "$floe" serve --warehouse "$tmp/wh" --catalog "$catalog_db" --listen 127.0.0.1:0 \
    --port-file "$tmp/serve.port" 2> "$tmp/serve.err" &
  serve_pid=$!
  for _ in $(seq 200); do [ -s "$tmp/serve.port" ] && break; sleep 0.05; done
  port=$(cat "$tmp/serve.port" 2>/dev/null || true)
  [ -n "$port" ] || fail "floe serve did not start: $(cat "$tmp/serve.err")"
  code=$(curl -s -o "$tmp/post.out" -w '%{http_code}' -XPOST "http://127.0.0.1:$port/v1/tables/ns.w/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary $'{"k":"s","v":1}\n{"k":"s","v":2}')
  [ "$code" = 200 ] || fail "POST to ns.w: $code $(cat "$tmp/post.out")"
  curl -s -o /dev/null -XPOST "http://127.0.0.1:$port/v1/admin/flush?wait=true&timeout=3" || true
  for _ in $(seq 100); do grep -q "kept [0-9]* files* outside" "$tmp/serve.err" && break; sleep 0.1; done
  kill "$serve_pid"; wait "$serve_pid" || true
  check serve '^./data/.*\.parquet$'
else
  echo "$name: no curl: floe serve's part not run"
fi

sqlite3 "$catalog_db" "DROP TRIGGER refuse"
[ "$("$floe" scan ns.victim --format canonical | wc -l)" = 30 ] || fail "victim's rows"
[ "$("$floe" scan ns.w --format canonical | wc -l)" = 30 ] || fail "ns.w's rows"

[ $fails = 0 ] || exit 1
echo "$name: ok"
