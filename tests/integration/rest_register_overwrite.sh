#!/usr/bin/env bash
# rest_register_overwrite.sh - `floe catalog serve`'s register with "overwrite": true is
# held to the same placement check as a new register (issue 21, adversary adv21g G6):
#
# In this order (4, 2, 1, 3), so that on the binary from before the fix the purge runs
# with s.t pointing at s.u's metadata:
#  1. overwriting table s.t onto table s.u's current metadata file (s.u's location) is a
#     400 naming s.u, as registering a new table s.v on it is; s.t keeps its pointer;
#  2. overwriting s.t onto a metadata file (a copy of its own without snapshots) whose
#     location lies inside s.u's location (<s.u>/sub) is a 400 naming s.u likewise;
#  3. a purge of s.t afterwards deletes none of s.u's files: s.u's metadata and data files
#     are all still there and `floe scan s.u` returns its row;
#  4. a legitimate overwrite still works: s.t moved back onto an older metadata file of its
#     own, then onto its newest again (200, the pointer moves, the rows follow).
# Before the fix, 1 and 2 answered 200 and the purge of s.t deleted s.u's files.
name=rest_register_overwrite
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

wh=$FLOE_WAREHOUSE
printf '%s\n' "$id_schema" > "$tmp/s.json"
"$floe" namespace create s >/dev/null
"$floe" table create s.t --schema "$tmp/s.json" >/dev/null
"$floe" table create s.u --schema "$tmp/s.json" >/dev/null
echo '{"id":1}' > "$tmp/u.ndjson"
"$floe" append s.u "$tmp/u.ndjson" >/dev/null
for k in 2 3; do
  echo "{\"id\":$k}" > "$tmp/t.ndjson"
  "$floe" append s.t "$tmp/t.ndjson" >/dev/null
done
start_server
T=open

# mloc TABLE: the table's metadata-location, by a load through the server
mloc() {
  [ "$(req $T GET "/v1/namespaces/s/tables/$1")" = 200 ] || fail "load s.$1: $(head -c 300 "$tmp/body")"
  jget '["metadata-location"]' < "$tmp/body"
}
# ufiles: s.u's own files (not the planted sub folder), one per line, sorted
ufiles() { find "$wh/s/u" -path "$wh/s/u/sub" -prune -o -type f -print | sort; }

mu=$(mloc u)
mt=$(mloc t)
ufiles > "$tmp/u.before"
[ "$(grep -c '\.parquet$' "$tmp/u.before")" -ge 1 ] || fail "s.u has no data file: $(cat "$tmp/u.before")"

# 4. a legitimate overwrite: s.t back onto its previous metadata file, then its newest
prev=$(ls "$wh/s/t/metadata/"*.metadata.json | sort | tail -2 | head -1)
[ "file://$prev" != "$mt" ] || fail "s.t has one metadata file: $(ls "$wh/s/t/metadata")"
expect_soft "register overwrite s.t on its previous metadata" 200 "$prev" \
  POST /v1/namespaces/s/register \
  "{\"name\":\"t\",\"metadata-location\":\"file://$prev\",\"overwrite\":true}"
rows=$(FLOE_CATALOG_URI=$base "$floe" scan s.t 2>&1 | tr -d ' \n')
[ "$rows" = '{"id":2}' ] || soft "s.t at its previous metadata scans $rows (expected id 2 only)"
expect_soft "register overwrite s.t back on its newest metadata" 200 "${mt#file://}" \
  POST /v1/namespaces/s/register \
  "{\"name\":\"t\",\"metadata-location\":\"$mt\",\"overwrite\":true}"
[ "$(mloc t)" = "$mt" ] || soft "s.t's pointer is $(mloc t) (expected $mt)"
rows=$(FLOE_CATALOG_URI=$base "$floe" scan s.t 2>&1 | sort | tr -d ' \n')
[ "$rows" = '{"id":2}{"id":3}' ] || soft "s.t at its newest metadata scans $rows (expected ids 2, 3)"

# 2. onto metadata (a copy of s.t's, location edited) whose location is inside s.u's
mkdir -p "$wh/s/u/sub/metadata"
inside=$wh/s/u/sub/metadata/00009-x.metadata.json
python3 - "${mt#file://}" "file://$wh/s/u/sub" "$inside" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["location"] = sys.argv[2]
# no snapshots: its files are its location's alone (the check of a register's manifest
# lists is not the one under test)
for k in ("current-snapshot-id", "statistics", "partition-statistics"):
    m.pop(k, None)
m.update({"snapshots": [], "snapshot-log": [], "refs": {}})
json.dump(m, open(sys.argv[3], "w"))
PY
expect_soft "register new s.v on metadata inside s.u" 400 "location of table s.u" \
  POST /v1/namespaces/s/register "{\"name\":\"v\",\"metadata-location\":\"file://$inside\"}"
expect_soft "register overwrite s.t on metadata inside s.u" 400 "location of table s.u" \
  POST /v1/namespaces/s/register \
  "{\"name\":\"t\",\"metadata-location\":\"file://$inside\",\"overwrite\":true}"
[ "$(mloc t)" = "$mt" ] || soft "s.t's pointer moved to $(mloc t) (expected $mt)"

# 1. onto s.u's own metadata
expect_soft "register new s.v on s.u's metadata" 400 "location of table s.u" \
  POST /v1/namespaces/s/register "{\"name\":\"v\",\"metadata-location\":\"$mu\"}"
expect_soft "register overwrite s.t on s.u's metadata" 400 "location of table s.u" \
  POST /v1/namespaces/s/register \
  "{\"name\":\"t\",\"metadata-location\":\"$mu\",\"overwrite\":true}"
[ "$(mloc t)" = "$mt" ] || soft "s.t's pointer moved to $(mloc t) (expected $mt)"

rm -rf "$wh/s/u/sub"

# 3. a purge of s.t leaves s.u whole
got=$(req $T DELETE "/v1/namespaces/s/tables/t?purgeRequested=true")
[ "$got" = 204 ] || soft "purge s.t: $got $(head -c 300 "$tmp/body")"
ufiles > "$tmp/u.after"
cmp -s "$tmp/u.before" "$tmp/u.after" ||
  soft "the purge of s.t deleted s.u's files: $(comm -23 "$tmp/u.before" "$tmp/u.after" | head -5 | tr '\n' ' ')"
rows=$(FLOE_CATALOG_URI=$base "$floe" scan s.u 2>&1 | tr -d ' \n') || true
[ "$rows" = '{"id":1}' ] || soft "s.u after the purge of s.t scans: $(echo "$rows" | head -c 300)"
[ "$(req $T GET /v1/namespaces/s/tables/u)" = 200 ] ||
  soft "load s.u after the purge of s.t: $(head -c 300 "$tmp/body")"
[ ! -e "$wh/s/t/metadata" ] || [ -z "$(ls "$wh/s/t/metadata")" ] ||
  soft "the purge of s.t left its metadata: $(ls "$wh/s/t/metadata" | head -3 | tr '\n' ' ')"

server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: PASS"
