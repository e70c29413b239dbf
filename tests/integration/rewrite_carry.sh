#!/usr/bin/env bash
# rewrite_carry.sh - `floe rewrite` with page carry (floe/parquet.h, floe_colbuf_page):
# whole PLAIN pages of the inputs keep their stored bodies in the output. Two tables get
# the same four appends; one is rewritten with page-carry (the default), the other with
# page-carry=false. The carried output must
#   - have carried pages (and the other none);
#   - be read back by DuckDB, hyparquet and parquet-wasm as exactly the appended events;
#   - scan like the re-encoded one, with the same per-column chunk statistics (min, max,
#     nulls). (The writer's file metrics, which the manifest records, are compared in
#     test_pq_writer_fast.)
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "rewrite_carry: FAIL: $*" >&2; exit 1; }
cd "$tmp"
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
schema=$src/tests/data/events.schema.json
"$floe" gen --seed 5 --count 8000 -o ev.ndjson > /dev/null
"$floe" namespace create d > /dev/null
# Snappy (a codec without levels), 64 KiB pages (carry from 32 KiB), a small dictionary
# limit so that strings such as payload fall back to PLAIN early
for t in a b; do
  "$floe" table create d.$t --schema "$schema" \
    --property write.parquet.compression-codec=snappy \
    --property write.parquet.page-size-bytes=65536 \
    --property write.parquet.dict-size-bytes=4096 > /dev/null
done
split -l 2000 ev.ndjson part_
for t in a b; do
  for f in part_*; do "$floe" append d.$t "$f" > /dev/null; done
done
field() { node -e 'const d = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(d[process.argv[1]])' "$1"; }
"$floe" rewrite d.a -q --json -o min-input-files=2 > a.json || fail "rewrite a"
"$floe" rewrite d.b -q --json -o min-input-files=2 -o page-carry=false > b.json || fail "rewrite b"
ca=$(field carried_pages < a.json); cb=$(field carried_pages < b.json)
[ "$ca" -gt 0 ] || fail "no page carried: $(cat a.json)"
[ "$cb" -eq 0 ] || fail "page-carry=false carried $cb pages"
for t in a b; do
  [ "$("$floe" files d.$t | wc -l)" -eq 1 ] || fail "table $t: expected one file after the rewrite"
done
fa=$("$floe" files d.a | cut -f1); fb=$("$floe" files d.b | cut -f1)
fa=${fa#file://}; fb=${fb#file://} # recorded as file:/// URIs; the readers take paths

# three readers: exactly the events appended
node "$js/canon_ndjson.mjs" --schema "$schema" ev.ndjson > expect.ndjson
for r in duckdb hyparquet parquet-wasm; do
  node "$js/read_parquet.mjs" --reader "$r" --schema "$schema" "$fa" > got.$r.ndjson ||
    fail "$r could not read $fa"
  node "$js/compare.mjs" --sort-key event_id expect.ndjson got.$r.ndjson ||
    fail "$r disagrees with the appended events"
done

# the same rows as the re-encoded table, the same chunk statistics
"$floe" scan d.a | sort > scan.a; "$floe" scan d.b | sort > scan.b
[ "$(wc -l < scan.a)" -eq 8000 ] || fail "scan of a: $(wc -l < scan.a) rows"
cmp -s scan.a scan.b || fail "the carried table scans differently from the re-encoded one"
stats() { # column: min .. max .., nulls N (sizes, encodings and page index left out)
  "$floe" inspect "$1" | grep -E '^  [a-z_.]+: ' |
    sed -E 's/^  ([a-z_.]+): .*(min .*, nulls [0-9]+).*$/\1 \2/'
}
stats "$fa" > stats.a; stats "$fb" > stats.b
[ "$(grep -c ' min ' stats.a)" -ge 15 ] || fail "statistics missing: $(cat stats.a)"
diff stats.a stats.b > /dev/null || fail "chunk statistics differ: $(diff stats.a stats.b | head -5)"
grep -q '^payload ' stats.a || fail "no payload statistics"
echo "rewrite_carry: 1 passed, 0 failed ($ca pages carried)"
