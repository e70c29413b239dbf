#!/usr/bin/env bash
# Manifests and manifest lists written by floe, checked by avsc (an independent Avro
# implementation) against the spec's v2 Avro schemas with field ids
# (tests/data/iceberg/*.avsc, written from format/spec.md): header keys, schema equality
# (ids, types, optionality, map key/value ids, the partition struct), every record decoded.
# The files come from test_manifest's round-trip tests (FLOE_MANIFEST_OUT).
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
TEST_BIN=${TEST_MANIFEST_BIN:-$(dirname "$FLOE")/test_manifest}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v node >/dev/null || { echo "manifest_avsc: node missing, skipped"; exit 77; }
[ -x "$TEST_BIN" ] || fail "test_manifest not built at $TEST_BIN"
FLOE_MANIFEST_OUT="$tmp" "$TEST_BIN" > "$tmp/unit.log" 2>&1 || { cat "$tmp/unit.log"; fail "test_manifest"; }

shopt -s nullglob
files=("$tmp"/*.avro)
[ ${#files[@]} -ge 7 ] || fail "expected the round-trip manifests and lists, got ${#files[@]} files"
node tests/js/manifest_check.mjs tests/data/iceberg "${files[@]}" > "$tmp/check.out" ||
    fail "avsc check: $(cat "$tmp/check.out")"
cat "$tmp/check.out"
# record counts as the unit test wrote them
grep -q "^ok manifest 4 .*/floe-data-m0.avro$" "$tmp/check.out" || fail "data manifest entries"
grep -q "^ok list 2 .*/snap-555-1-floe.avro$" "$tmp/check.out" || fail "manifest list entries"
for c in deflate snappy zstd uncompressed; do
    grep -q "^ok manifest 2 .*/floe-deletes-$c-m[0-9].avro$" "$tmp/check.out" || fail "deletes manifest ($c)"
done

# the checker must tell a non-conforming file apart: a PyIceberg manifest (no schema-id in
# the header, equality_ids as array<long>) fails it
if node tests/js/manifest_check.mjs tests/data/iceberg \
    "${FLOE_CONFORMANCE:-../shared/conformance}/iceberg/duckdb-iceberg/equality_delete_extra_column/warehouse/ns/t/metadata/482c51b1-71ea-4508-b282-e2d753a5ef36-m0.avro" \
    >/dev/null 2>&1; then
    fail "the checker accepted a manifest that does not follow the v2 spec"
fi
echo "manifest_avsc: ok"
