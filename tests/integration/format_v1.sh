#!/usr/bin/env bash
# format_v1.sh - a format v1 table (Spark's lineitem_iceberg_gz from
# ../shared/conformance/iceberg, copied to a scratch folder) keeps format v1 through every
# floe commit path unless an upgrade is asked for (spec "Version 1" writer rules and
# "Appendix E"): rewrite of the folder, then as a catalog table append, rewrite-manifests,
# expire; `floe table upgrade` and `rewrite -o format-version=2` upgrade it. After each:
#   - the metadata says format-version 1 with no sequence numbers and the v1 "schema" and
#     "partition-spec" fields (python json);
#   - the manifests and lists floe wrote are v1 files: header format-version "1", no
#     content / sequence-number keys, fields and ids of the spec's v1 schemas
#     (tests/data/iceberg/*_v1.avsc), every record decoded by avsc (manifest_check.mjs);
#   - the summary totals equal the manifests (summary_check.mjs);
#   - DuckDB reads the live data files the manifests list and finds the rows of the
#     original file (count and an order-free checksum of every row; duckdb_rows.mjs).
# (icebird is no oracle here: it demands file sequence numbers of v1 EXISTING/DELETED
# entries, which v1 does not have.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
conf=${FLOE_CONFORMANCE:-$root/../shared/conformance}/iceberg
js=$root/tests/js
avsc=$root/tests/data/iceberg
[ -d "$conf" ] || { echo "missing conformance folder $conf"; exit 1; }
command -v node > /dev/null || { echo "format_v1: node missing, skipped"; exit 77; }
[ -d "$js/node_modules/@duckdb/node-api" ] || { echo "format_v1: tests/js not installed, skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
src="$conf/duckdb-iceberg/iceberg/lineitem_iceberg_gz"
want=$(node "$js/duckdb_rows.mjs" "$src"/data/*.parquet)

# check LABEL METADATA-FILE VERSION [ROWS-CHECKSUM]
check() {
    local label=$1 md=${2#file://} v=$3 rows=${4:-$want}
    local before=$fails
    python3 - "$md" "$v" > "$tmp/meta.out" 2>&1 <<'EOF' || fail "$label: metadata: $(cat "$tmp/meta.out")"
import gzip, json, sys
raw = open(sys.argv[1], 'rb').read()
m = json.loads(gzip.decompress(raw) if raw[:2] == b'\x1f\x8b' else raw)
v = int(sys.argv[2])
assert m['format-version'] == v, 'format-version %s' % m['format-version']
if v == 1:
    assert 'last-sequence-number' not in m, 'last-sequence-number in v1'
    assert all('sequence-number' not in s for s in m['snapshots']), 'snapshot sequence-number in v1'
    cur = [s for s in m['schemas'] if s['schema-id'] == m['current-schema-id']][0]
    assert m['schema']['fields'] == cur['fields'], 'schema is not the current schema'
    spec = [s for s in m['partition-specs'] if s['spec-id'] == m['default-spec-id']][0]
    assert m['partition-spec'] == spec['fields'], 'partition-spec is not the default spec'
else:
    assert 'schema' not in m and 'partition-spec' not in m, 'deprecated v1 fields kept in v2'
    assert m['last-sequence-number'] >= 0
EOF
    node "$js/summary_check.mjs" --list --metadata "$md" > "$tmp/sum" 2>/dev/null ||
        fail "$label: $(tail -1 "$tmp/sum")"
    local got
    got=$(awk '$1 == "data" {print $2}' "$tmp/sum" | xargs node "$js/duckdb_rows.mjs")
    [ "$got" = "$rows" ] || fail "$label: DuckDB reads '$got' from the live files, expected '$rows'"
    # the files floe wrote since the last check
    # (not the copies of the original's manifests and lists that the migration to
    # absolute paths writes: they keep the original writer's schema, record for record;
    # a copied list is named after one of the original snapshots)
    local new copies="" f id
    for f in "$(dirname "$md")"/snap-*.avro; do
        id=$(basename "$f" | cut -d- -f2)
        [ -n "$(find "$src/metadata" -name "snap-$id-*.avro")" ] || continue
        copies="$copies $(basename "$f" .avro | cut -d- -f4-)"
    done
    new=$(find "$(dirname "$md")" -name '*.avro' -newer "$tmp/stamp" | sort |
          while read -r f; do
              skip=
              for u in $copies; do case $f in *"$u"*) skip=1 ;; esac; done
              [ -n "$skip" ] || echo "$f"
          done)
    if [ -n "$new" ]; then
        # shellcheck disable=SC2086
        node "$js/manifest_check.mjs" --format-version="$v" "$avsc" $new > "$tmp/avsc" 2>&1 ||
            fail "$label: avsc: $(tail -1 "$tmp/avsc")"
    fi
    touch "$tmp/stamp"
    [ "$fails" != "$before" ] || echo "ok $label (v$v, $(grep -c '^data' "$tmp/sum") live data files)"
}

# 1. rewrite of the table folder keeps v1 and says so
cp -r "$src" "$tmp/li"
touch "$tmp/stamp"
sleep 1
"$FLOE" rewrite "$tmp/li" -o rewrite-all=true > "$tmp/out" 2>&1 || fail "rewrite: $(cat "$tmp/out")"
grep -q 'kept at format v1' "$tmp/out" || fail "rewrite does not say the table stayed v1: $(cat "$tmp/out")"
check "rewrite (folder)" "$("$FLOE" catalog locate "$tmp/li")" 1
"$FLOE" rewrite "$tmp/li" -o rewrite-all=true --json > "$tmp/res.json" 2>/dev/null
grep -q '"format_version":1,"format_upgraded":false' "$tmp/res.json" ||
    fail "rewrite --json: $(cat "$tmp/res.json")"
touch "$tmp/stamp"

# 2. as a catalog table: append, rewrite-manifests, expire keep v1; table upgrade
export FLOE_CATALOG_URI="sqlite:///$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true
mkdir "$tmp/cat"
cp -r "$src" "$tmp/cat/lineitem_iceberg_gz"
touch "$tmp/stamp"
cd "$tmp/cat" # the table's location is ./lineitem_iceberg_gz
"$FLOE" namespace create ns > /dev/null
"$FLOE" table register ns.li "$tmp/cat/lineitem_iceberg_gz/metadata/v2.gz.metadata.json" > /dev/null
md() { "$FLOE" table describe ns.li --json |
       python3 -c "import json,sys; print(json.load(sys.stdin)['metadata_location'].removeprefix('file://'))"; }
{ "$FLOE" cat "$src"/data/*.parquet --format ndjson 2>/dev/null || true; } | head -3000 > "$tmp/part.ndjson"
cp "$tmp/part.ndjson" "$tmp/part2.ndjson"
"$FLOE" append ns.li "$tmp/part.ndjson" > "$tmp/out" 2>&1 || fail "append: $(cat "$tmp/out")"
# the rows after the append: the original file and the appended part, read by DuckDB
plus=$(node "$js/summary_check.mjs" --list --metadata "$(md)" 2>/dev/null | awk '$1 == "data" {print $2}' |
       xargs node "$js/duckdb_rows.mjs")
[ "${plus%% *}" = 114968 ] || fail "append: DuckDB reads $plus rows from the live files"
check "append" "$(md)" 1 "$plus"
"$FLOE" rewrite-manifests ns.li > "$tmp/out" 2>&1 || fail "rewrite-manifests: $(cat "$tmp/out")"
check "rewrite-manifests" "$(md)" 1 "$plus"
"$FLOE" expire ns.li --older-than 0s --retain-last 1 > "$tmp/out" 2>&1 || fail "expire: $(cat "$tmp/out")"
check "expire" "$(md)" 1 "$plus"
"$FLOE" table upgrade ns.li > "$tmp/out" 2>&1 || fail "table upgrade: $(cat "$tmp/out")"
grep -q 'upgraded ns.li from format v1 to v2' "$tmp/out" || fail "table upgrade says: $(cat "$tmp/out")"
check "table upgrade" "$(md)" 2 "$plus"
"$FLOE" table upgrade ns.li --json | grep -q '"upgraded":false' || fail "a second upgrade is not a no-op"
"$FLOE" append ns.li "$tmp/part2.ndjson" > /dev/null 2>&1 || fail "append after the upgrade"
[ "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['format-version'])" "$(md)" 2>/dev/null ||
    zcat "$(md)" | python3 -c "import json,sys; print(json.load(sys.stdin)['format-version'])")" = 2 ] ||
    fail "append after the upgrade is not v2"
cd "$root"

# 3. rewrite -o format-version=2 upgrades a folder, and says so
cp -r "$src" "$tmp/up"
touch "$tmp/stamp"
"$FLOE" rewrite "$tmp/up" -o rewrite-all=true -o format-version=2 > "$tmp/out" 2>&1 ||
    fail "rewrite -o format-version=2: $(cat "$tmp/out")"
grep -q 'upgraded from format v1 to v2' "$tmp/out" || fail "rewrite does not say it upgraded: $(cat "$tmp/out")"
check "rewrite -o format-version=2" "$("$FLOE" catalog locate "$tmp/up")" 2
"$FLOE" rewrite "$tmp/up" -o rewrite-all=true -o format-version=1 > "$tmp/out" 2>&1 &&
    fail "a rewrite that asks to downgrade to v1 succeeded"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "format_v1: all ok"
