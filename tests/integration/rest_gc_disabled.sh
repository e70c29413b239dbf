#!/usr/bin/env bash
# rest_gc_disabled.sh - Iceberg's table property gc.enabled=false (the table's files may
# be other tables' too) stops every floe path that deletes the table's files (adversary
# finding F7 on issue 21: `floe expire` deleted files of such a table):
#  - a table created through `floe catalog serve` with gc.enabled=false, two appends:
#    `floe expire` (also --dry-run, --keep-files) and `floe orphans` exit 1 naming the
#    table and the property; nothing is expired, no file is deleted (an old planted
#    orphan stays);
#  - `floe maintain --once` skips expire and orphans with a message naming the property,
#    runs the rest, and succeeds;
#  - DELETE ...?purgeRequested=true answers 400 and keeps the table and its files;
#    `floe table drop --purge` (through REST, and on the SQLite catalog directly) exits 1
#    and keeps them too;
#  - `floe table properties set gc.enabled=maybe` is a usage error (exit 2);
#  - with gc.enabled=true set again, the same expire and orphans run (the refusal was the
#    property's); every exchange is checked against the OpenAPI document.
name=rest_gc_disabled
source "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

serve_checked ""
local_uri=$FLOE_CATALOG_URI
R=/v1/namespaces/shop
schema='"schema":{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"kind","type":"string","required":false}]}'
expect 200 x POST /v1/namespaces '{"namespace":["shop"]}'
expect 200 x POST $R/tables "{\"name\":\"gc\",\"properties\":{\"gc.enabled\":\"false\"},$schema}"
printf '{"id":1,"kind":"a"}\n' > "$tmp/e.ndjson"
export FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db
"$floe" append shop.gc "$tmp/e.ndjson" >/dev/null 2>"$tmp/err" || fail "append 1: $(cat "$tmp/err")"
"$floe" append shop.gc "$tmp/e.ndjson" >/dev/null 2>"$tmp/err" || fail "append 2: $(cat "$tmp/err")"
loc=$(curl -s "$base$R/tables/gc" | jget '["metadata"]["location"]')
dir=${loc#file://}
# an orphan old enough for the default threshold
echo stray > "$dir/data/stray.parquet"
touch -d '10 days ago' "$dir/data/stray.parquet"
files_before=$(find "$dir" -type f | sort)
nsnap() { curl -s "$base$R/tables/gc" | jget '["metadata"]["snapshots"].__len__()'; }
[ "$(nsnap)" = 2 ] || fail "setup: want 2 snapshots, have $(nsnap)"

# refused: exit 1, the table and the property named, nothing changed
refused() { # refused WHAT CMD...
  local what=$1 rc=0
  shift
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] || soft "$what: exit $rc, want 1: $(head -c 300 "$tmp/err") $(head -c 300 "$tmp/out")"
  grep -q 'shop\.gc' "$tmp/err" && grep -q 'gc\.enabled' "$tmp/err" ||
    soft "$what: the error names neither the table nor gc.enabled: $(head -c 300 "$tmp/err")"
  [ "$(nsnap)" = 2 ] || soft "$what: snapshots changed: $(nsnap)"
  [ "$(find "$dir" -type f | sort)" = "$files_before" ] || soft "$what: files of the table changed"
}
refused "expire" "$floe" expire shop.gc --older-than 0s --retain-last 1
refused "expire --dry-run" "$floe" expire shop.gc --older-than 0s --retain-last 1 --dry-run
refused "expire --keep-files" "$floe" expire shop.gc --older-than 0s --retain-last 1 --keep-files
refused "orphans" "$floe" orphans shop.gc
refused "orphans --force" "$floe" orphans shop.gc --older-than 0s --force

# floe maintain: the deleting jobs skipped with the reason, the run a success
cat > "$tmp/maint.conf" <<CONF
[defaults]
expire.older-than = 0s
expire.retain-last = 1
orphans.older-than = 1h
CONF
rc=0
"$floe" maintain shop.gc --once --schedule "$tmp/maint.conf" --json >"$tmp/maint.json" 2>"$tmp/maint.err" || rc=$?
[ "$rc" = 0 ] || soft "maintain: exit $rc: $(tail -3 "$tmp/maint.err")"
for job in expire orphans; do
  grep -q "\"job\":\"$job\".*\"result\":\"skipped\".*gc\.enabled is false" "$tmp/maint.json" ||
    soft "maintain: $job not skipped naming gc.enabled: $(grep "\"job\":\"$job\"" "$tmp/maint.json" | head -c 400)"
done
grep -q '"job":"rewrite-manifests".*"result":"\(ok\|skipped\)"' "$tmp/maint.json" ||
  soft "maintain: the other jobs did not run: $(head -c 600 "$tmp/maint.json")"
[ "$(nsnap)" = 2 ] || soft "maintain expired snapshots: $(nsnap)"
[ "$(find "$dir" -type f | sort)" = "$files_before" ] || soft "maintain changed the table's files"

# purge: refused, the table and its files kept
code=$(req x DELETE "$R/tables/gc?purgeRequested=true")
[ "$code" = 400 ] || soft "DELETE purgeRequested=true: $code, want 400: $(head -c 300 "$tmp/body")"
grep -q 'gc\.enabled' "$tmp/body" || soft "the 400 does not name gc.enabled: $(head -c 300 "$tmp/body")"
refused "table drop --purge (REST)" "$floe" table drop shop.gc --purge
FLOE_CATALOG_URI=$local_uri refused "table drop --purge (SQLite)" "$floe" table drop shop.gc --purge
expect 200 x GET $R/tables/gc

# the property takes true or false only
rc=0
"$floe" table properties shop.gc set gc.enabled=maybe >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || soft "properties set gc.enabled=maybe: exit $rc, want 2: $(cat "$tmp/err")"
[ "$(curl -s "$base$R/tables/gc" | jget '["metadata"]["properties"]["gc.enabled"]')" = false ] ||
  soft "gc.enabled changed by a refused set"

# control: with gc.enabled=true the same commands do their work
"$floe" table properties shop.gc set gc.enabled=true >/dev/null 2>"$tmp/err" || fail "set gc.enabled=true: $(cat "$tmp/err")"
"$floe" expire shop.gc --older-than 0s --retain-last 1 >"$tmp/out" 2>"$tmp/err" || soft "expire with gc on: $(cat "$tmp/err")"
[ "$(nsnap)" = 1 ] || soft "expire with gc on left $(nsnap) snapshots"
"$floe" orphans shop.gc >"$tmp/out" 2>"$tmp/err" || soft "orphans with gc on: $(cat "$tmp/err")"
[ ! -e "$dir/data/stray.parquet" ] || soft "orphans with gc on kept the old stray file"
expect 204 x DELETE "$R/tables/gc?purgeRequested=true"
server_alive
openapi_check
[ "$fails" = 0 ] || { echo "$name: $fails failure(s)" >&2; exit 1; }
echo "$name: ok"
