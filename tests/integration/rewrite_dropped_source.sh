#!/usr/bin/env bash
# rewrite_dropped_source.sh - `floe rewrite` of a file written under an older partition
# spec whose source column has since been dropped (allowed: not in the current spec).
# The table's metadata no longer binds that spec to the current schema, so the rewrite
# writes the old manifest (its entry marked deleted) with the spec the manifest's own
# header binds; that spec must live until the manifest is written (under ASan a
# use-after-free exits 99). Asserted: the rewrite succeeds, the file is rewritten into
# the current spec (identity(s)), and the table scans to the same rows as before.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "rewrite_dropped_source: FAIL: $*" >&2; exit 1; }
cd "$tmp"
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
echo '{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"s","required":false,"type":"string"}]}' > s.json
printf '{"id":1,"s":"a"}\n{"id":2,"s":"b"}\n{"id":3,"s":"a"}\n' > d.ndjson
"$floe" namespace create ns > /dev/null
"$floe" table create ns.u --schema s.json --partition 'bucket(2, id)' > /dev/null
"$floe" append ns.u d.ndjson > /dev/null
"$floe" table partition ns.u replace 's' > /dev/null
"$floe" table schema ns.u drop-column id > /dev/null
"$floe" scan ns.u --format ndjson | sort > before.ndjson
[ "$(wc -l < before.ndjson)" -eq 3 ] || fail "scan before: $(cat before.ndjson)"
rc=0
"$floe" rewrite ns.u --option rewrite-all=true > rewrite.out 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "rewrite exit $rc: $(cat rewrite.out)"
grep -q "rewrote 2 data files" rewrite.out || fail "rewrite: $(cat rewrite.out)"
"$floe" scan ns.u --format ndjson | sort > after.ndjson
cmp -s before.ndjson after.ndjson || fail "rows differ: $(cat before.ndjson) vs $(cat after.ndjson)"
"$floe" files ns.u 2> files.err | cut -f2 | sort > parts
[ "$(tr '\n' ' ' < parts)" = "s=a s=b " ] || fail "files after the rewrite: $(cat parts)"
echo "rewrite_dropped_source: ok"
