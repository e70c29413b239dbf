#!/usr/bin/env bash
# zorder_geometry.sh - floe rewrite --strategy sort --sort-order "zorder(...)" refuses a
# geometry or geography column with a clear error, as the linear sort order does (issue
# 23, adversary r4: it z-ordered the WKB bytes as a binary and committed), and commits
# nothing; z-ordering the other columns still works.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "zorder_geometry: FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
"$floe" namespace create ns > /dev/null
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"g","required":false,"type":"geometry"},{"id":3,"name":"h","required":false,"type":"geography"}]}' > "$tmp/s.json"
"$floe" table create ns.t --schema "$tmp/s.json" --property format-version=3 > /dev/null
python3 - > "$tmp/a.ndjson" <<'PY'
import base64, json, struct
for i in range(4):
    wkb = base64.b64encode(struct.pack('<BIdd', 1, 1, float(i), float(-i))).decode()
    print(json.dumps({"id": i, "g": wkb, "h": wkb}))
PY
"$floe" append ns.t "$tmp/a.ndjson" > /dev/null
"$floe" append ns.t "$tmp/a.ndjson" > /dev/null
n0=$("$floe" snapshots ns.t | wc -l)
for col in g h; do
  kind=$([ $col = g ] && echo geometry || echo geography)
  if "$floe" rewrite ns.t --option rewrite-all=true --strategy sort \
       --sort-order "zorder(id, $col)" > "$tmp/out" 2>&1; then
    fail "zorder over $kind column $col accepted: $(cat "$tmp/out")"
  fi
  grep -q "zorder: column '$col' is a $kind column, which cannot be z-ordered" "$tmp/out" ||
    fail "unclear refusal for $col: $(cat "$tmp/out")"
done
[ "$("$floe" snapshots ns.t | wc -l)" = "$n0" ] || fail "a refused rewrite committed"
"$floe" rewrite ns.t --option rewrite-all=true --strategy sort --sort-order "zorder(id)" \
  > "$tmp/out" 2>&1 || fail "zorder(id): $(cat "$tmp/out")"
[ "$("$floe" scan ns.t | wc -l)" = 8 ] || fail "rows after the rewrite"
echo "zorder_geometry: ok"
