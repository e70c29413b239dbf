#!/usr/bin/env bash
# bounds_rewrite.sh - the bounds of the files floe rewrite and floe serve write are the
# data's (DuckDB's min/max, bounds_oracle.mjs check), and pruning by them never changes a
# scan's rows (test_prune_diff, random --where filters).
#
#  1. Rows of tests/js/bounds_oracle.mjs gen (nulls, NaN, -0.0, infinities, int extremes,
#     long non-ASCII strings, timestamps from 1968 on, decimals, uuids, binary, a struct,
#     a list): a DuckDB file and NDJSON appended to an unpartitioned table and rewritten
#     into one file; the DuckDB file split (--split) and NDJSON appended to a
#     bucket(3, i), month(ts) table, rewritten per partition; NDJSON appended in 16 KB
#     row groups and rewritten by copying the row groups as stored (fast copy, truncated
#     chunk statistics).
#  2. floe serve ingests floe gen events over HTTP into an event_type, hour(ts) table
#     (three posts, each flushed and compacted); bounds checked too.
#  3. Random filters on each: pruned plans hold every file with a matching row; a few
#     through the CLI (floe scan versus floe scan --no-prune).
name=bounds_rewrite
. "$(dirname "$0")/lib/bounds_common.sh"

oracle schema > "$tmp/schema.json"
for k in 0 1 2; do oracle gen --seed $((k + 11)) --rows 1500 --start $((k * 1500)) > "$tmp/rows$k.ndjson"; done
node "$js/duckdb_copy.mjs" --schema "$tmp/schema.json" --row-group-size 500 "$tmp/rows0.ndjson" "$tmp/duck.parquet"
"$floe" namespace create b >/dev/null

# ---------------------------------------------------------------------------------------
# 1. rewrite: into one file, per partition, by copying row groups
# ---------------------------------------------------------------------------------------
"$floe" table create b.rw --schema "$tmp/schema.json" --property write.metadata.metrics.default=full >/dev/null
"$floe" append b.rw "$tmp/duck.parquet" >/dev/null
"$floe" append b.rw "$tmp/rows1.ndjson" >/dev/null
"$floe" append b.rw "$tmp/rows2.ndjson" >/dev/null
"$floe" rewrite b.rw --option rewrite-all=true --option min-input-files=1 --quiet >/dev/null
check b.rw full 1
"$floe" table create b.prw --schema "$tmp/schema.json" --partition "bucket(3, i), month(ts)" \
  --property write.parquet.row-group-size-bytes=16384 >/dev/null
"$floe" append b.prw "$tmp/duck.parquet" --split >/dev/null
"$floe" append b.prw "$tmp/rows1.ndjson" >/dev/null
"$floe" append b.prw "$tmp/rows2.ndjson" >/dev/null
"$floe" rewrite b.prw --option rewrite-all=true --quiet >/dev/null
check b.prw truncate16 4
"$floe" table create b.copy --schema "$tmp/schema.json" \
  --property write.parquet.row-group-size-bytes=16384 --property write.parquet.compression-codec=snappy >/dev/null
for k in 0 1 2; do "$floe" append b.copy "$tmp/rows$k.ndjson" >/dev/null; done
"$floe" rewrite b.copy --option rewrite-all=true --option fast-copy=true --json --quiet > "$tmp/copy.json"
grep -q '"fast_copied_row_groups":[1-9]' "$tmp/copy.json" || fail "no row group copied: $(cat "$tmp/copy.json")"
check b.copy truncate16 1

# ---------------------------------------------------------------------------------------
# 2. floe serve
# ---------------------------------------------------------------------------------------
"$floe" gen --schema-out "$tmp/events.schema.json" >/dev/null
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/swh
maintain = false
[defaults]
seal_bytes = 64KB
seal_age = 1s
compact_bytes = 1GB
compact_age = 1h
[table s.events]
schema = $tmp/events.schema.json
partition = event_type, hour(ts)
CONF
"$floe" serve --config "$tmp/serve.conf" --port-file "$tmp/port" 2>>"$tmp/server.log" &
pid=$!
for _ in $(seq 600); do [ -s "$tmp/port" ] && break; kill -0 "$pid" 2>/dev/null || fail "serve exited"; sleep 0.05; done
[ -s "$tmp/port" ] || fail "serve did not start"
port=$(cat "$tmp/port")
for k in 1 2 3; do
  "$floe" gen --seed $((20 + k)) --count 1000 -o "$tmp/ev$k.ndjson" >/dev/null
  curl -sf -XPOST --data-binary @"$tmp/ev$k.ndjson" -H 'Content-Type: application/x-ndjson' \
    "http://127.0.0.1:$port/v1/tables/s.events/events" >/dev/null || fail "post $k"
  curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" >/dev/null || fail "flush $k"
done
kill -TERM "$pid"; wait "$pid" || fail "serve exit status"; pid=
served=$(find "$tmp/swh" -path '*/s/events' -type d | head -1)
[ -n "$served" ] || fail "no served table folder"
[ "$("$floe" scan "$served" --format canonical | wc -l)" = 3000 ] || fail "served table rows"
smeta=$(ls -t "$served"/metadata/*.metadata.json | head -1)
oracle check --metadata "$smeta" --mode truncate16 --min-files 3 > "$tmp/check.out" 2>&1 ||
  { tail -5 "$tmp/check.out" >&2; fail "served table: manifest bounds differ from DuckDB's"; }
tail -1 "$tmp/check.out" | sed "s/^/served (truncate16): /"

# ---------------------------------------------------------------------------------------
# 3. random filters: pruned == unpruned
# ---------------------------------------------------------------------------------------
prune_diff "b.rw@$((filters / 2));b.prw@$filters;b.copy@$((filters / 2));$served@$filters"
sed -i "s|^$served:|served:|" "$tmp/prune.out"
pruned_some b.prw served
cli_same b.prw "NOT (d < 0)" "s LIKE 'é%'" "dec > '0.01' OR st.x IS NULL"
cli_same "$served" "event_type = 'click' AND ts >= '2026-01-01'" "NOT (user_id < 1000)"
echo "$name: ok"
