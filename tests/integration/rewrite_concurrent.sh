#!/usr/bin/env bash
# rewrite_concurrent.sh - floe rewrite alongside live writers, and killed at random.
#
#  1. While `floe rewrite` runs over the same partitions (partial progress, several
#     runs), another process appends a small file every 200 ms: every append that
#     reported success is in the table, every event exactly once.
#  2. `floe rewrite` is killed with SIGKILL at random moments (20 times): after each kill
#     the table reads completely and exactly (at most orphan files remain), and a final
#     rewrite still works.
#  3. The rows after all of it equal the rows of the inputs, checked with floe scan and
#     with DuckDB reading the live data files directly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FLOE=${FLOE_BIN:-$root/build/floe}
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$FLOE" gen --schema-out "$tmp/schema.json"
"$FLOE" namespace create ns >/dev/null
"$FLOE" table create ns.ev --schema "$tmp/schema.json" --partition "event_type" \
    --property commit.retry.num-retries=20 --property commit.retry.min-wait-ms=20 \
    --property commit.retry.max-wait-ms=500 --property write.parquet.compression-codec=snappy \
    >/dev/null

# event ids of the inputs that were committed
: > "$tmp/expected_ids"
gen_file() { # seed out
    "$FLOE" gen --seed "$1" --count 40 --partitions 3 \
        --start "2026-10-06T$(printf '%02d' $(( $1 % 24 ))):00:00Z" -o "$2" 2>/dev/null >/dev/null
}
ids_of() { grep -o '"event_id":"[^"]*"' "$1" | cut -d'"' -f4; }
for s in $(seq 1 12); do
    gen_file "$s" "$tmp/seed-$s.ndjson"
    "$FLOE" append ns.ev "$tmp/seed-$s.ndjson" >/dev/null
    ids_of "$tmp/seed-$s.ndjson" >> "$tmp/expected_ids"
done

table_ids() { "$FLOE" scan ns.ev --columns event_id --format canonical | cut -d'"' -f4 | LC_ALL=C sort; }
check_table() { # label
    table_ids > "$tmp/got"
    LC_ALL=C sort "$tmp/expected_ids" > "$tmp/want"
    if ! cmp -s "$tmp/got" "$tmp/want"; then
        fail "$1: rows differ (got $(wc -l < "$tmp/got"), want $(wc -l < "$tmp/want"); duplicates: $(uniq -d "$tmp/got" | wc -l))"
        return 1
    fi
}
check_table "seeded"

# --- 1. appends every 200 ms while rewrites run --------------------------------------
appender() {
    local k=1000
    while [ ! -e "$tmp/stop" ]; do
        k=$((k + 1))
        gen_file "$k" "$tmp/app-$k.ndjson"
        if "$FLOE" append ns.ev "$tmp/app-$k.ndjson" >/dev/null 2>"$tmp/app-$k.err"; then
            ids_of "$tmp/app-$k.ndjson" >> "$tmp/appended_ids"
        else
            echo "append $k failed: $(cat "$tmp/app-$k.err")" >> "$tmp/append_failures"
        fi
        sleep 0.2
    done
}
: > "$tmp/appended_ids"
appender &
pids+=($!)
rewrites_ok=0
run=0
# at least 4 rewrites, and on until the appender has landed 5 batches beside them (on a
# loaded machine an append can take longer than a rewrite)
while [ "$run" -lt 4 ] || { [ "$(wc -l < "$tmp/appended_ids")" -lt 200 ] && [ "$run" -lt 20 ]; }; do
    run=$((run + 1))
    if "$FLOE" rewrite ns.ev -q --json -o min-input-files=2 -o partial-progress.enabled=true \
        -o partial-progress.max-commits=3 -o target-file-size-bytes=2000000 \
        > "$tmp/rw-$run.json" 2> "$tmp/rw-$run.err"; then
        rewrites_ok=$((rewrites_ok + 1))
    else
        echo "rewrite run $run: $(cat "$tmp/rw-$run.err")"
    fi
    sleep 0.3
done
touch "$tmp/stop"
wait "${pids[0]}"
pids=()
rm -f "$tmp/stop"
[ "$rewrites_ok" -ge $((run - 1)) ] || fail "only $rewrites_ok of $run rewrites succeeded next to the appender"
grep -q '"groups_committed":[1-9]' "$tmp"/rw-*.json || fail "no rewrite committed anything"
napp=$(wc -l < "$tmp/appended_ids")
[ "$napp" -ge 200 ] || fail "the appender landed only $napp rows"
[ ! -s "$tmp/append_failures" ] || fail "appends failed: $(head -3 "$tmp/append_failures")"
cat "$tmp/appended_ids" >> "$tmp/expected_ids"
check_table "after concurrent appends" && echo "ok: $napp appended rows all present once, $rewrites_ok rewrites"

# --- 2. kill -9 at random moments ------------------------------------------------------
# each round adds a few files so there is something to rewrite, then kills the rewrite
for round in $(seq 1 20); do
    for j in 1 2; do
        k=$((5000 + round * 10 + j))
        gen_file "$k" "$tmp/k-$k.ndjson"
        "$FLOE" append ns.ev "$tmp/k-$k.ndjson" >/dev/null
        ids_of "$tmp/k-$k.ndjson" >> "$tmp/expected_ids"
    done
    "$FLOE" rewrite ns.ev -q -o rewrite-all=true -o threads=1 \
        -o target-file-size-bytes=2000000 > /dev/null 2>&1 &
    victim=$!
    sleep "0.$(printf '%03d' $((RANDOM % 600)))"
    kill -9 "$victim" 2>/dev/null || true
    wait "$victim" 2>/dev/null || true
    check_table "after kill $round" || break
done
echo "ok: 20 kills, table complete after each"
# a final rewrite succeeds and leaves the same rows
"$FLOE" rewrite ns.ev -q -o min-input-files=2 -o target-file-size-bytes=2000000 >/dev/null ||
    fail "final rewrite failed"
check_table "after the final rewrite"

# --- 3. DuckDB over the live data files ------------------------------------------------
"$FLOE" files ns.ev | cut -f1 > "$tmp/files"
node -e '
  const { DuckDBInstance } = require(process.argv[1] + "/node_modules/@duckdb/node-api");
  (async () => {
    const files = require("fs").readFileSync(process.argv[2], "utf8").trim().split("\n");
    const db = await DuckDBInstance.create(":memory:");
    const c = await db.connect();
    const list = files.map(f => `'"'"'${f}'"'"'`).join(",");
    const r = await c.runAndReadAll(`SELECT CAST(event_id AS VARCHAR) AS id FROM read_parquet([${list}]) ORDER BY id`);
    for (const row of r.getRows()) console.log(row[0]);
  })().catch(e => { console.error(e.message); process.exit(1); });
' "$root/tests/js" "$tmp/files" | LC_ALL=C sort > "$tmp/duck"
LC_ALL=C sort "$tmp/expected_ids" > "$tmp/want"
cmp -s "$tmp/duck" "$tmp/want" || fail "DuckDB over the data files: $(wc -l < "$tmp/duck") ids, want $(wc -l < "$tmp/want")"

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "rewrite_concurrent: all ok"
