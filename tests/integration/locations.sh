#!/usr/bin/env bash
# locations.sh - where floe records a table's files and where it looks for them.
#
#  1. Every location floe records is an absolute URI, whatever was typed: a table made
#     with the relative default ./warehouse opens from another folder, its catalog pointer,
#     metadata-log, manifest lists, manifests and data paths are file:/// URIs (read back
#     with avsc, tests/js/table_paths.mjs), and icebird reads it.
#  2. Warehouses an earlier floe wrote with relative paths (tests/data/legacy, SQLite and
#     filesystem catalogs) open from another folder; their next commit rewrites every
#     recorded path to an absolute one; a copy of such a warehouse is written through the
#     copy, never through the original (the original is byte for byte unchanged).
#  3. A copied warehouse with absolute paths is refused (naming both warehouses) until the
#     old paths are mapped with --relocate; the mapped commit records the copy's paths and
#     the original stays unchanged (SQLite and filesystem catalogs).
#  4. Placement: a table never lies inside or holds another table's location, the landing
#     folder or the quarantine (create, register); floe serve's auto-create of a table
#     inside another (two first posts) is refused with 400 and the first table is intact.
#  5. Orphan removal refuses (deleting nothing) when another table lies in or holds the
#     location, whether the catalog knows it or only its metadata files show it.
#  6. floe rewrite / expire on a folder that a catalog manages are refused, naming the
#     table; on a folder nobody manages they commit Hadoop-style.
#  7. A table folder rewritten through its path: the next metadata file is numbered from
#     metadata files only (a manifest named 78371392-...-m1001.avro does not count), and
#     every path written is absolute (the relative paths of the conformance table are
#     migrated); floe health's recommended expire on a folder runs.
#  8. A namespace's location property holds its tables; `floe namespace create X --property
#     k=v` works and a bad property is reported by `floe namespace`.
#  9. The same placement rules on an s3:// warehouse (the signature-checking S3 server).
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
conf=${FLOE_CONFORMANCE:-$src/../shared/conformance}
[ -d "$conf/iceberg" ] || conf=/work/shared/conformance
js=$src/tests/js
legacy=$src/tests/data/legacy
# the fixtures' metadata files are kept as NAME.metadata.json.in (see its README)
unpack_metadata() {
  for f in "$1"/*.metadata.json.in; do mv "$f" "${f%.in}"; done
}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "locations: FAIL: $*" >&2; [ -n "${KEEP:-}" ] && echo "kept $tmp" >&2; exit 1; }
unset FLOE_CATALOG_URI FLOE_WAREHOUSE FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true
export HOME=$tmp PYICEBERG_HOME=$tmp # no .pyiceberg.yaml of the host

jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }
rows() { "$floe" scan "$@" 2>/dev/null | wc -l | tr -d ' '; }
# a listing of a folder tree with each file's checksum: "unchanged" is a diff of two
tree_sum() { (cd "$1" && find . -type f ! -name '*.db-*' -print0 | sort -z | xargs -0 md5sum); }
# every path the table's current metadata records starts with $2
all_under() {
  node "$js/table_paths.mjs" "$1" > "$tmp/paths" || fail "table_paths $1"
  [ -s "$tmp/paths" ] || fail "no paths read from $1"
  if grep -v " $2" "$tmp/paths" | grep -q .; then
    grep -v " $2" "$tmp/paths" | head -5 >&2
    fail "paths recorded outside $2 (above)"
  fi
}
pointer() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select metadata_location from iceberg_tables where table_namespace=? and table_name=?", (sys.argv[2], sys.argv[3])).fetchone()[0])' "$@"; }
sqlite_build() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(open(sys.argv[2]).read()); c.commit()' "$1" "$2"; }

"$floe" gen --schema-out "$tmp/schema.json"
printf '{"id":6,"kind":"a"}\n{"id":7,"kind":"d"}\n' > "$tmp/b3.ndjson"
cat > "$tmp/small.schema.json" <<'EOF'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"kind","required":true,"type":"string"}]}
EOF

# ---------------------------------------------------------------------------------------
# 1. the default ./warehouse records absolute URIs
# ---------------------------------------------------------------------------------------
mkdir -p "$tmp/one/sub"
(
  cd "$tmp/one"
  "$floe" namespace create demo >/dev/null
  "$floe" table create demo.events --schema "$tmp/small.schema.json" --partition kind >/dev/null
  "$floe" append demo.events "$tmp/b3.ndjson" >/dev/null
  loc=$("$floe" table describe demo.events --json | jget '["location"]')
  [ "$loc" = "file://$tmp/one/warehouse/demo/events" ] || fail "location recorded as $loc"
)
ptr=$(pointer "$tmp/one/warehouse/catalog.db" demo events)
case $ptr in "file://$tmp/one/warehouse/demo/events/metadata/"*) ;; *) fail "catalog pointer $ptr" ;; esac
all_under "$ptr" "file://$tmp/one/warehouse/demo/events"
n=$(cd "$tmp/one/sub" && FLOE_WAREHOUSE=../warehouse rows demo.events)
[ "$n" = 2 ] || fail "opened from another folder: $n rows"
n=$(cd "$js" && node icebird_read.mjs --metadata "${ptr#file://}" --count)
[ "$n" = 2 ] || fail "icebird reads $n rows"
# names with spaces, '%' and non-ASCII letters: recorded as they are (not percent-encoded,
# as PyIceberg and Iceberg Java write and read local paths)
(
  cd "$tmp/one"
  "$floe" namespace create "sp ace" >/dev/null
  "$floe" table create "sp ace.ü%41 b" --schema "$tmp/small.schema.json" >/dev/null
  "$floe" append "sp ace.ü%41 b" "$tmp/b3.ndjson" >/dev/null
  [ "$(rows "sp ace.ü%41 b")" = 2 ] || fail "table with spaces and % in its name"
)
ptr=$(pointer "$tmp/one/warehouse/catalog.db" "sp ace" "ü%41 b")
all_under "$ptr" "file://$tmp/one/warehouse/sp ace/ü%41 b"
[ -d "$tmp/one/warehouse/sp ace/ü%41 b/data" ] || fail "data not in the folder named as the table"
n=$(cd "$js" && node icebird_read.mjs --metadata "${ptr#file://}" --count)
[ "$n" = 2 ] || fail "icebird reads $n rows of the table with spaces and % in its name"

# ---------------------------------------------------------------------------------------
# 2. warehouses an earlier floe wrote with relative paths
# ---------------------------------------------------------------------------------------
mkdir -p "$tmp/old" "$tmp/elsewhere"
cp -r "$legacy/sql-warehouse" "$tmp/old/warehouse"
unpack_metadata "$tmp/old/warehouse/demo/events/metadata"
sqlite_build "$tmp/old/warehouse/catalog.db" "$legacy/sql-warehouse.sql"
case $(pointer "$tmp/old/warehouse/catalog.db" demo events) in
  warehouse/*) ;; *) fail "the legacy fixture is not relative" ;;
esac
# opened from another folder
n=$(cd "$tmp/elsewhere" && FLOE_WAREHOUSE="$tmp/old/warehouse" rows demo.events)
[ "$n" = 5 ] || fail "legacy catalog from another folder: $n rows, want 5"
# a copy, written through the copy only
cp -r "$tmp/old/warehouse" "$tmp/old/wh2"
tree_sum "$tmp/old/warehouse" > "$tmp/orig.sum"
(
  cd "$tmp/old"
  FLOE_WAREHOUSE=wh2 "$floe" append demo.events "$tmp/b3.ndjson" > /dev/null ||
    fail "append to the copy"
  FLOE_WAREHOUSE=wh2 "$floe" rewrite demo.events --option rewrite-all=true --quiet > /dev/null ||
    fail "rewrite of the copy"
)
tree_sum "$tmp/old/warehouse" | diff -q - "$tmp/orig.sum" > /dev/null ||
  fail "writing the copy changed the original warehouse"
n=$(cd "$tmp/old" && rows demo.events)
[ "$n" = 5 ] || fail "original: $n rows"
n=$(cd "$tmp/elsewhere" && FLOE_WAREHOUSE="$tmp/old/wh2" rows demo.events)
[ "$n" = 7 ] || fail "copy: $n rows, want 7"
ptr=$(pointer "$tmp/old/wh2/catalog.db" demo events)
case $ptr in "file://$tmp/old/wh2/demo/events/metadata/"*) ;; *) fail "copy's pointer: $ptr" ;; esac
all_under "$ptr" "file://$tmp/old/wh2/demo/events"
n=$(cd "$js" && node icebird_read.mjs --metadata "${ptr#file://}" --count)
[ "$n" = 7 ] || fail "icebird reads the migrated copy: $n rows"
# the filesystem catalog's legacy warehouse
cp -r "$legacy/fs-warehouse" "$tmp/old/fsw"
unpack_metadata "$tmp/old/fsw/demo/events/metadata"
printf 3 > "$tmp/old/fsw/demo/events/metadata/version-hint.text" # the filesystem catalog's pointer
n=$(cd "$tmp/elsewhere" && FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE="$tmp/old/fsw" rows demo.events)
[ "$n" = 5 ] || fail "legacy filesystem catalog from another folder: $n rows"
(cd "$tmp/elsewhere" && FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE="$tmp/old/fsw" \
  "$floe" append demo.events "$tmp/b3.ndjson" > /dev/null) || fail "append to the legacy filesystem table"
cur=$(cat "$tmp/old/fsw/demo/events/metadata/version-hint.text")
all_under "$tmp/old/fsw/demo/events/metadata/v$cur.metadata.json" "file://$tmp/old/fsw/demo/events"
n=$(cd "$tmp/elsewhere" && FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE="$tmp/old/fsw" rows demo.events)
[ "$n" = 7 ] || fail "legacy filesystem table after its migration: $n rows"

# ---------------------------------------------------------------------------------------
# 3. a copied warehouse with absolute paths
# ---------------------------------------------------------------------------------------
for kind in sql filesystem; do
  d=$tmp/copy-$kind
  mkdir -p "$d"
  export FLOE_CATALOG_TYPE=$kind FLOE_WAREHOUSE=$d/wh
  [ $kind = sql ] && export FLOE_CATALOG_TYPE=sql
  "$floe" namespace create demo > /dev/null
  "$floe" table create demo.t --schema "$tmp/small.schema.json" > /dev/null
  "$floe" append demo.t "$tmp/b3.ndjson" > /dev/null
  cp -r "$d/wh" "$d/wh2"
  tree_sum "$d/wh" > "$d/orig.sum"
  export FLOE_WAREHOUSE=$d/wh2
  if "$floe" append demo.t "$tmp/b3.ndjson" > /dev/null 2> "$d/err"; then
    fail "$kind: an append to the copy went through the original's paths"
  fi
  grep -q "moved or copied" "$d/err" || fail "$kind: refusal does not say why: $(cat "$d/err")"
  grep -q -- "--relocate" "$d/err" || fail "$kind: refusal does not say how to map: $(cat "$d/err")"
  if "$floe" scan demo.t > /dev/null 2>&1; then fail "$kind: the copy was read through the original"; fi
  n=$(rows demo.t --relocate "$d/wh=$d/wh2")
  [ "$n" = 2 ] || fail "$kind: relocated scan: $n rows"
  "$floe" append demo.t "$tmp/b3.ndjson" --relocate "$d/wh=$d/wh2" > /dev/null ||
    fail "$kind: relocated append"
  tree_sum "$d/wh" | diff -q - "$d/orig.sum" > /dev/null || fail "$kind: the original changed"
  n=$(rows demo.t)
  [ "$n" = 4 ] || fail "$kind: the copy after its relocated commit: $n rows (without --relocate)"
  export FLOE_WAREHOUSE=$d/wh
  n=$(rows demo.t)
  [ "$n" = 2 ] || fail "$kind: the original: $n rows"
  if [ $kind = sql ]; then
    all_under "$(pointer "$d/wh2/catalog.db" demo t)" "file://$d/wh2/demo/t"
    # no table is left under the old warehouse: the copy's record follows it
    w=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select property_value from floe_catalog_properties where property_key=?", ("warehouse",)).fetchone()[0])' "$d/wh2/catalog.db")
    [ "$w" = "file://$d/wh2" ] || fail "the copy's catalog records warehouse $w"
  else
    cur=$(cat "$d/wh2/demo/t/metadata/version-hint.text")
    all_under "$d/wh2/demo/t/metadata/v$cur.metadata.json" "file://$d/wh2/demo/t"
  fi
done
unset FLOE_CATALOG_TYPE FLOE_WAREHOUSE

# ---------------------------------------------------------------------------------------
# 4. placement
# ---------------------------------------------------------------------------------------
export FLOE_WAREHOUSE=$tmp/place/wh
"$floe" gen --seed 3 --count 300 -o "$tmp/ev.ndjson" > /dev/null
"$floe" namespace create shop > /dev/null
"$floe" table create shop.events --schema "$tmp/schema.json" --partition event_type > /dev/null
"$floe" append shop.events "$tmp/ev.ndjson" > /dev/null
"$floe" namespace create shop.events > /dev/null
if "$floe" table create shop.events.data --schema "$tmp/schema.json" 2> "$tmp/err"; then
  fail "a table was created inside shop.events's folder"
fi
grep -q "inside the location of table shop.events" "$tmp/err" || fail "create: $(cat "$tmp/err")"
for l in "$tmp/place/wh" "$tmp/place" "$tmp/place/wh/_landing/x" "$tmp/place/wh/_quarantine/y" \
         "$tmp/place/wh/shop/events/sub"; do
  if "$floe" table create shop.x --schema "$tmp/schema.json" --location "$l" 2> "$tmp/err"; then
    fail "a table was created at $l"
  fi
  grep -q "a folder of its own" "$tmp/err" || fail "create at $l: $(cat "$tmp/err")"
done
m=$(ls "$tmp/place/wh/shop/events/metadata/"*.metadata.json | tail -n 1)
if "$floe" table register shop.again "$m" 2> "$tmp/err"; then fail "registered a second table at shop.events's location"; fi
grep -q "shop.events" "$tmp/err" || fail "register: $(cat "$tmp/err")"
[ "$(rows shop.events)" = 300 ] || fail "shop.events changed"

# floe serve: two first posts, the second for a table inside the first
mkdir -p "$tmp/serve"
cat > "$tmp/serve/floe.conf" <<EOF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/serve/wh
maintain = false
auto_create = true
EOF
"$floe" serve --config "$tmp/serve/floe.conf" --port-file "$tmp/serve/port" > /dev/null 2> "$tmp/serve/log" &
pids+=($!)
port=
for _ in $(seq 300); do
  [ -s "$tmp/serve/port" ] && port=$(cat "$tmp/serve/port") && break
  sleep 0.1
done
[ -n "$port" ] || fail "floe serve did not start: $(cat "$tmp/serve/log")"
head -n 50 "$tmp/ev.ndjson" > "$tmp/post.ndjson"
code=$(curl -s -o "$tmp/serve/a1" -w '%{http_code}' -X POST --data-binary @"$tmp/post.ndjson" \
  -H 'Content-Type: application/x-ndjson' "http://127.0.0.1:$port/v1/tables/shop.events/events")
[ "$code" = 200 ] || fail "first post: $code $(cat "$tmp/serve/a1")"
code=$(curl -s -o "$tmp/serve/a2" -w '%{http_code}' -X POST --data-binary @"$tmp/post.ndjson" \
  -H 'Content-Type: application/x-ndjson' "http://127.0.0.1:$port/v1/tables/shop.events.data/events")
[ "$code" = 400 ] || fail "post to a table inside shop.events: $code $(cat "$tmp/serve/a2")"
grep -q "inside the location of table shop.events" "$tmp/serve/a2" || fail "post answer: $(cat "$tmp/serve/a2")"
curl -sf -X POST "http://127.0.0.1:$port/v1/admin/flush?compact=1" > /dev/null || fail "flush"
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
n=$(FLOE_WAREHOUSE=$tmp/serve/wh rows shop.events)
[ "$n" = 50 ] || fail "served shop.events: $n rows"

# ---------------------------------------------------------------------------------------
# 5. orphan removal refuses around another table
# ---------------------------------------------------------------------------------------
# a table folder nobody registered, copied inside shop.events (its metadata shows it)
"$floe" table create shop.side --schema "$tmp/schema.json" > /dev/null
"$floe" append shop.side "$tmp/ev.ndjson" > /dev/null
mkdir -p "$tmp/place/wh/shop/events/data/nested"
cp -r "$tmp/place/wh/shop/side/." "$tmp/place/wh/shop/events/data/nested/"
tree_sum "$tmp/place/wh/shop/events" > "$tmp/ev.sum"
if "$floe" orphans shop.events --older-than 0s --force 2> "$tmp/err"; then
  fail "orphans deleted around a nested table folder"
fi
grep -q "nested/metadata" "$tmp/err" || fail "orphans (nested folder): $(cat "$tmp/err")"
tree_sum "$tmp/place/wh/shop/events" | diff -q - "$tmp/ev.sum" > /dev/null || fail "orphans deleted files"
# ... and one the catalog knows, registered there by another tool (as an earlier release
# or PyIceberg could)
rm -rf "$tmp/place/wh/shop/events/data/nested"
cp -r "$tmp/place/wh/shop/side/." "$tmp/place/wh/shop/events/data/"
python3 - "$FLOE_WAREHOUSE/catalog.db" "$(ls "$tmp/place/wh/shop/events/data/metadata/"*.metadata.json | tail -n 1)" <<'EOF'
import json, os, sqlite3, sys
md = sys.argv[2]
m = json.load(open(md))
m["location"] = "file://" + os.path.dirname(os.path.dirname(md))  # .../shop/events/data
json.dump(m, open(md, "w"))
c = sqlite3.connect(sys.argv[1])
c.execute("insert into iceberg_tables values ('default', 'shop.events', 'data', ?, NULL, 'TABLE')", ("file://" + md,))
c.commit()
EOF
tree_sum "$tmp/place/wh/shop/events" > "$tmp/ev.sum"
for t in shop.events.data shop.events; do
  if "$floe" orphans "$t" --older-than 0s --force 2> "$tmp/err"; then
    fail "orphans of $t deleted files of the other table"
  fi
  grep -q "nothing was deleted: .*shop.events" "$tmp/err" || fail "orphans $t: $(cat "$tmp/err")"
done
tree_sum "$tmp/place/wh/shop/events" | diff -q - "$tmp/ev.sum" > /dev/null || fail "orphans deleted files"
# rename checks placement too: neither of two nested tables can be renamed while the
# other's location is inside it or holds it, and both keep their names
if "$floe" table rename shop.events shop.moved 2> "$tmp/err"; then
  fail "renamed shop.events whose location holds shop.events.data's"
fi
grep -q "contains the location of table shop.events.data" "$tmp/err" || fail "rename: $(cat "$tmp/err")"
if "$floe" table rename shop.events.data shop.events.d2 2> "$tmp/err"; then
  fail "renamed shop.events.data whose location lies inside shop.events's"
fi
grep -q "lies inside the location of table shop.events" "$tmp/err" || fail "rename: $(cat "$tmp/err")"
[ "$(rows shop.events)" = 300 ] || fail "shop.events after the refused renames"
# a table registered by another tool at the warehouse root, which holds the landing
# folder, the quarantine and the catalog: orphan removal deletes nothing there
mkdir -p "$tmp/place/wh/_landing/shop.events" "$tmp/place/wh/_quarantine/shop.events" "$tmp/place/wh/metadata"
echo landed > "$tmp/place/wh/_landing/shop.events/old.lz4"
echo quarantined > "$tmp/place/wh/_quarantine/shop.events/q.ndjson"
cp "$(ls "$tmp/place/wh/shop/side/metadata/"*.metadata.json | tail -n 1)" "$tmp/place/wh/metadata/"
python3 - "$FLOE_WAREHOUSE/catalog.db" "$(ls "$tmp/place/wh/metadata/"*.metadata.json | tail -n 1)" <<'EOF'
import json, os, sqlite3, sys
md = os.path.abspath(sys.argv[2])
m = json.load(open(md))
m["location"] = "file://" + os.path.dirname(os.path.dirname(md))  # the warehouse
json.dump(m, open(md, "w"))
c = sqlite3.connect(sys.argv[1])
c.execute("insert into iceberg_tables values ('default', 'shop', 'atroot', ?, NULL, 'TABLE')", ("file://" + md,))
c.commit()
EOF
# (the catalog's database at the root may change: floe keeps each table's place there)
root_sum() { tree_sum "$1" | sed 's|^[0-9a-f]*  \./catalog\.db$|kept ./catalog.db|'; }
root_sum "$tmp/place/wh" > "$tmp/wh.sum"
if "$floe" orphans shop.atroot --older-than 0s --force 2> "$tmp/err"; then
  fail "orphans ran on a table at the warehouse root"
fi
grep -q "nothing was deleted: .*contains the warehouse" "$tmp/err" || fail "orphans at the root: $(cat "$tmp/err")"
root_sum "$tmp/place/wh" | diff - "$tmp/wh.sum" >&2 || fail "orphans at the root deleted files"
[ "$(rows shop.events)" = 300 ] || fail "shop.events lost rows"

# ---------------------------------------------------------------------------------------
# 6. commits through a folder that a catalog manages
# ---------------------------------------------------------------------------------------
for cmd in "rewrite --option rewrite-all=true" "expire --older-than 0s" "rewrite-manifests"; do
  # the configured catalog
  # shellcheck disable=SC2086
  if "$floe" $cmd "$tmp/place/wh/shop/side" 2> "$tmp/err" > /dev/null; then
    fail "floe $cmd committed through a managed folder"
  fi
  grep -q "table shop.side of catalog default" "$tmp/err" || fail "floe $cmd: $(cat "$tmp/err")"
  # a catalog.db above the folder (a copied warehouse), not configured
  # shellcheck disable=SC2086
  if (cd "$tmp" && FLOE_WAREHOUSE=$tmp/nowhere "$floe" $cmd "$tmp/old/wh2/demo/events" 2> "$tmp/err" > /dev/null); then
    fail "floe $cmd committed through a folder managed by $tmp/old/wh2/catalog.db"
  fi
  grep -q "table demo.events of the catalog in $tmp/old/wh2/catalog.db" "$tmp/err" ||
    fail "floe $cmd (copied warehouse): $(cat "$tmp/err")"
done
[ ! -e "$tmp/nowhere" ] || fail "looking for a managing catalog created one"

# ---------------------------------------------------------------------------------------
# 7. a table folder rewritten by path: metadata numbering, absolute paths
# ---------------------------------------------------------------------------------------
mkdir -p "$tmp/conf" "$tmp/conf-run"
cp -r "$conf/iceberg/duckdb-iceberg/is_null_is_not_null" "$tmp/conf/t"
chmod -R u+w "$tmp/conf"
# a manifest whose name starts with a number
cp "$(ls "$tmp/conf/t/metadata/"*-m0.avro | head -n 1)" "$tmp/conf/t/metadata/78371392-aaaa-bbbb-cccc-dddddddddddd-m1001.avro"
before=$(rows "$tmp/conf/t")
(cd "$tmp/conf-run" && "$floe" rewrite ../conf/t --option rewrite-all=true --quiet > /dev/null) ||
  fail "rewrite of the conformance copy"
ls "$tmp/conf/t/metadata" | grep -q '^v78371393' && fail "metadata numbered from a manifest name"
cur=$(cat "$tmp/conf/t/metadata/version-hint.text")
[ "$cur" -lt 10 ] || fail "version hint $cur"
all_under "$tmp/conf/t/metadata/v$cur.metadata.json" "file://$tmp/conf/t"
n=$(rows "$tmp/conf/t")
[ "$n" = "$before" ] || fail "rewritten folder: $n rows, want $before"
n=$(cd "$js" && node icebird_read.mjs --metadata "$tmp/conf/t/metadata/v$cur.metadata.json" --count)
[ "$n" = "$before" ] || fail "icebird reads $n rows of the rewritten folder"
# floe health on a folder recommends commands that take folders
"$floe" health "$tmp/conf/t" --json > "$tmp/health.json" || fail "health"
python3 - "$tmp/health.json" > "$tmp/recs" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])).get("recommendations", []):
    print(r["command"])
EOF
grep -q '^floe expire ' "$tmp/recs" || fail "health recommends no expiry: $(cat "$tmp/recs")"
while read -r line; do
  case $line in floe\ expire*|floe\ rewrite-manifests*) ;; *) continue ;; esac
  # shellcheck disable=SC2086
  eval "\"$floe\" ${line#floe } > /dev/null 2> \"$tmp/err\"" || fail "recommended '$line': $(cat "$tmp/err")"
done < "$tmp/recs"
[ "$(rows "$tmp/conf/t")" = "$before" ] || fail "rows after the recommended commands"

# ---------------------------------------------------------------------------------------
# 8. namespaces: location property, --property
# ---------------------------------------------------------------------------------------
export FLOE_WAREHOUSE=$tmp/ns/wh
mkdir -p "$tmp/ns/run"
(cd "$tmp/ns/run" && "$floe" namespace create sales --property location=../sales-data --property owner=x > /dev/null) ||
  fail "namespace create --property"
"$floe" namespace properties sales --json > "$tmp/props.json"
[ "$(jget '["location"]' < "$tmp/props.json")" = "file://$tmp/ns/sales-data" ] ||
  fail "namespace location recorded as $(cat "$tmp/props.json")"
[ "$(jget '["owner"]' < "$tmp/props.json")" = x ] || fail "namespace properties $(cat "$tmp/props.json")"
"$floe" table create sales.orders --schema "$tmp/small.schema.json" > /dev/null
loc=$("$floe" table describe sales.orders --json | jget '["location"]')
[ "$loc" = "file://$tmp/ns/sales-data/orders" ] || fail "table in a located namespace at $loc"
if "$floe" namespace create other owner 2> "$tmp/err"; then fail "bad property accepted"; fi
grep -q "^floe namespace" "$tmp/err" || fail "bad property reported as: $(cat "$tmp/err")"
unset FLOE_WAREHOUSE

# ---------------------------------------------------------------------------------------
# 9. an s3:// warehouse
# ---------------------------------------------------------------------------------------
source "$src/tests/lib/s3sig.sh"
s3sig_start "$tmp" || fail "could not start the S3 server"
export FLOE_CATALOG_URI=$tmp/s3cat.db FLOE_WAREHOUSE=s3://wh/w
"$floe" namespace create shop > /dev/null
"$floe" table create shop.events --schema "$tmp/schema.json" > /dev/null
loc=$("$floe" table describe shop.events --json | jget '["location"]')
[ "$loc" = "s3://wh/w/shop/events" ] || fail "s3 location $loc"
"$floe" namespace create shop.events > /dev/null
for args in "shop.events.data" "shop.x --location s3://wh/w/_landing/x" "shop.y --location s3a://wh/w"; do
  # shellcheck disable=SC2086
  if "$floe" table create $args --schema "$tmp/schema.json" 2> "$tmp/err"; then
    fail "s3: created $args"
  fi
  grep -q "a folder of its own" "$tmp/err" || fail "s3 create $args: $(cat "$tmp/err")"
done
"$floe" table create shop.z --schema "$tmp/schema.json" --location s3://wh/w/shop/eventsZ > /dev/null ||
  fail "s3: a location beside another"
# a name with a space, '%' and a non-ASCII letter: the key is the name as it is
"$floe" table create "shop.ü%41 b" --schema "$tmp/small.schema.json" > /dev/null
"$floe" append "shop.ü%41 b" "$tmp/b3.ndjson" > /dev/null || fail "s3: append to a table with % in its name"
[ "$(rows "shop.ü%41 b")" = 2 ] || fail "s3: rows of the table with % in its name"
node "$js/s3_cli.mjs" ls wh "w/shop/ü%41 b/" > "$tmp/s3keys" || fail "s3 list"
grep -q "^w/shop/ü%41 b/data/" "$tmp/s3keys" || fail "s3 keys: $(head -3 "$tmp/s3keys")"
[ "$(s3sig_failures)" = 0 ] || fail "unsigned S3 requests"
unset FLOE_CATALOG_URI FLOE_WAREHOUSE

echo "locations: ok"
