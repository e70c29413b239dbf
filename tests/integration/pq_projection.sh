#!/usr/bin/env bash
# Projections print what the full read prints, through the floe program, on nested files
# DuckDB writes here (maps of maps, maps of structs, structs of maps, lists of maps, lists
# of structs, struct keys): every schema node and every pair of leaves under one top-level
# field is projected with `floe cat --columns` and compared with the full read pruned to
# the same columns (tests/js/projection_check.mjs): NDJSON and CSV against floe's full
# read, canonical rows against DuckDB's full read (tests/js/read_parquet.mjs).
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
here=$(cd "$(dirname "$0")" && pwd)
js=$here/../js
[ -d "$js/node_modules/@duckdb/node-api" ] || { echo "FAIL: $js/node_modules missing (scripts/setup --test)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# DuckDB-written nested files
cat > "$tmp/write.mjs" <<'EOF'
const [api, dir] = process.argv.slice(2)
const { DuckDBInstance } = await import(api)
const c = await (await DuckDBInstance.create(':memory:')).connect()
await c.run(`COPY (SELECT * FROM (VALUES
  (MAP {'a': MAP {1: true, 2: false}}, 1, [1, 2]),
  (MAP {'b': MAP {1: true}}, 1, NULL),
  (NULL, 2, [3]),
  (MAP {'c': NULL, 'd': MAP {}}, 3, [])) t(a, b, c))
  TO '${dir}/duckdb_nested_maps.parquet' (FORMAT parquet)`)
await c.run(`COPY (SELECT * FROM (VALUES
  (1, MAP {'a': {'x': 1, 'y': ['p', NULL]}, 'b': NULL}, {'s': 'one', 'm': MAP {1: 'u', 2: NULL}},
      [MAP {'k': 1}, NULL, MAP {}], [{'a': 1, 'b': [1, 2]}, NULL], MAP {{'k': 1}: 10}),
  (2, NULL, NULL, NULL, NULL, NULL),
  (3, MAP {}, {'s': NULL, 'm': NULL}, [], [], MAP {}),
  (4, MAP {'c': {'x': NULL, 'y': []}}, {'s': 'four', 'm': MAP {}}, [NULL],
      [{'a': NULL, 'b': NULL}], MAP {{'k': NULL}: NULL, {'k': 2}: 20})
  ) t(id, ms, sm, lm, ls, mk)) TO '${dir}/duckdb_nested_mixed.parquet' (FORMAT parquet)`)
EOF
node "$tmp/write.mjs" "$js/node_modules/@duckdb/node-api/lib/index.js" "$tmp" \
    || { echo "FAIL: DuckDB could not write the nested files" >&2; exit 1; }

# the issue's example: the value leaf of a map keeps its keys
out=$("$FLOE" cat "$tmp/duckdb_nested_maps.parquet" --columns a.key_value.value --limit 1)
[ "$out" = '{"a":{"a":[{"key":1,"value":true},{"key":2,"value":false}]}}' ] || fail "map value projection: $out"
# CSV shows a map as NDJSON does
csv=$("$FLOE" cat "$tmp/duckdb_nested_maps.parquet" --columns a --format csv --limit 1 | tail -1)
[ "$csv" = '"{""a"":[{""key"":1,""value"":true},{""key"":2,""value"":false}]}"' ] || fail "csv map: $csv"

# every node and every pair of leaves under one top-level field, the canonical rows
# against DuckDB's full read (the conformance files get the same, every pair, in-process:
# tests/unit/test_pq_projection.c)
checked=0
for f in "$tmp"/duckdb_*.parquet; do
    b=$(basename "$f" .parquet)
    node "$js/read_parquet.mjs" --reader duckdb "$f" > "$tmp/$b.oracle" \
        || { fail "$b: DuckDB could not read it"; continue; }
    "$FLOE" cat --canonical "$f" > "$tmp/$b.floe"
    node "$js/compare.mjs" "$tmp/$b.floe" "$tmp/$b.oracle" >/dev/null || fail "$b: full read differs from DuckDB"
    node "$js/projection_check.mjs" --floe "$FLOE" --oracle "$tmp/$b.oracle" "$f" || fail "$b: projections differ"
    checked=$((checked + 1))
done
[ $checked -eq 2 ] || fail "only $checked files checked"

[ $failures -eq 0 ] || { echo "pq_projection: $failures failures" >&2; exit 1; }
echo "pq_projection: ok"
