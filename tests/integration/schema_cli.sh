#!/usr/bin/env bash
# floe schema infer / show: exit codes, inferred types on generated events, column layout.
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$FLOE" gen --count 300 --seed 7 -o "$tmp/ev.ndjson" >/dev/null
"$FLOE" schema infer "$tmp/ev.ndjson" --sample 100 -o "$tmp/s.json"
grep -q '"name": "ts"' "$tmp/s.json" || fail "no ts field"
grep -A3 '"name": "ts"' "$tmp/s.json" | grep -q '"timestamptz"' || fail "ts not timestamptz"
"$FLOE" schema show "$tmp/s.json" --columns --json > "$tmp/cols.json"
grep -q '"path":"ts"' "$tmp/cols.json" || fail "show --columns lacks ts"
# compact output is one line and parses back
"$FLOE" schema infer "$tmp/ev.ndjson" --json > "$tmp/c.json"
[ "$(wc -l < "$tmp/c.json")" -eq 1 ] || fail "--json not one line"
"$FLOE" schema show "$tmp/c.json" > /dev/null || fail "show of inferred schema"

# usage errors exit 2, failures 1
set +e
"$FLOE" schema infer >/dev/null 2>&1; [ $? -eq 2 ] || fail "infer without files should exit 2"
"$FLOE" schema frob >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown action should exit 2"
"$FLOE" schema infer "$tmp/missing.ndjson" >/dev/null 2>&1; [ $? -eq 1 ] || fail "missing file should exit 1"
printf 'not json\n' > "$tmp/bad.ndjson"
"$FLOE" schema infer "$tmp/bad.ndjson" >/dev/null 2>&1; [ $? -eq 1 ] || fail "no records should exit 1"
echo '{"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":"decimal(40,2)"}]}' > "$tmp/bad.json"
"$FLOE" schema show "$tmp/bad.json" >/dev/null 2>&1; [ $? -eq 1 ] || fail "bad schema should exit 1"
set -e
echo "schema_cli: ok"
