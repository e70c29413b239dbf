#!/usr/bin/env bash
# table_toolbox.sh - `floe table properties` and `floe table sort-order`, checked by the
# metadata file they commit (read here as JSON, not through floe) and by what other
# commands then do with it:
#   - properties set/unset in one commit each, nothing committed when nothing changes,
#     reserved properties refused (exit 2, naming the command to use, metadata untouched),
#     values floe cannot use for the properties it reads refused (exit 2, naming them),
#     times and snapshot ids past 64 bits refused (exit 2) rather than saturated,
#     four concurrent `set`s all land (optimistic-concurrency retry), a path is shown
#     but not changed, and a property set this way is honoured by the next append
#     (write.parquet.compression-codec, seen by DuckDB in the file's footer);
#   - sort-order set/clear: sort-orders and default-sort-order-id in the metadata, the
#     same order keeps its id, describe shows it (text and JSON), a bad column is refused,
#     and `floe rewrite --strategy sort` writes files DuckDB reads back in that order.
set -euo pipefail
name=table_toolbox oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

"$floe" table create ns.t --schema "$tmp/s.json" >/dev/null

# ---- properties -------------------------------------------------------------------------
"$floe" table properties ns.t set a=1 b=two --json > "$tmp/p1.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["changed"] is True and d["properties"]["a"]=="1" and d["properties"]["b"]=="two", d' "$tmp/p1.json" ||
  fail "properties set --json: $(cat "$tmp/p1.json")"
[ "$(mq ns.t 'm["properties"].get("a"), m["properties"].get("b")')" = "('1', 'two')" ] ||
  fail "properties set: metadata has $(mq ns.t 'm["properties"]')"
loc=$(meta ns.t)
"$floe" table properties ns.t set b=two --json | grep -q '"changed":false' || fail "a set that changes nothing reported a change"
[ "$(meta ns.t)" = "$loc" ] || fail "a set that changes nothing committed a new metadata file"
"$floe" table properties ns.t unset a never-set > "$tmp/u.txt"
grep -qx 'unset a' "$tmp/u.txt" && grep -qx 'never-set: not set' "$tmp/u.txt" || fail "unset report: $(cat "$tmp/u.txt")"
[ "$(mq ns.t '"a" in m["properties"], m["properties"].get("b")')" = "(False, 'two')" ] ||
  fail "unset: metadata has $(mq ns.t 'm["properties"]')"
"$floe" table properties ns.t | grep -qx 'b = two' || fail "properties listing lacks b = two"

# reserved properties: usage error naming what to use instead; nothing committed
loc=$(meta ns.t)
set +e
"$floe" table properties ns.t set format-version=1 2> "$tmp/r.err"; rc=$?
"$floe" table properties ns.t unset uuid 2>/dev/null; rc2=$?
out=$("$floe" table properties ns.t set current-snapshot-id=5 --json 2>/dev/null)
set -e
[ $rc = 2 ] && grep -q 'format-version is reserved: floe table upgrade' "$tmp/r.err" ||
  fail "format-version: exit $rc, $(cat "$tmp/r.err")"
[ $rc2 = 2 ] || fail "unset uuid: exit $rc2"
echo "$out" | grep -q '"error":{"code":"USAGE"' || fail "--json error: $out"
[ "$(meta ns.t)" = "$loc" ] && [ "$(mq ns.t 'm["format-version"]')" = 2 ] || fail "a reserved property changed the table"

# values no writer can use are usage errors naming the property; nothing committed
for kv in write.parquet.compression-codec=lzo write.target-file-size-bytes=-5 \
          write.parquet.page-row-limit=many commit.retry.num-retries=abc \
          history.expire.min-snapshots-to-keep=0 history.expire.max-snapshot-age-ms=7d \
          history.expire.max-ref-age-ms=-3 write.metadata.previous-versions-max=x \
          write.metadata.delete-after-commit.enabled=yes write.metadata.compression-codec=lz4; do
  set +e
  "$floe" table properties ns.t set "$kv" 2> "$tmp/v.err"; rc=$?
  set -e
  [ $rc = 2 ] && grep -qF "table property $kv:" "$tmp/v.err" || fail "set $kv: exit $rc, $(cat "$tmp/v.err")"
done
set +e
"$floe" table create ns.bad --schema "$tmp/s.json" --property write.parquet.compression-codec=lzo 2>/dev/null; rc=$?
set -e
[ $rc = 2 ] || fail "table create with a codec floe cannot write: exit $rc"
for kv in uuid=5f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b current-snapshot-id=7 snapshot-count=3; do
  set +e
  "$floe" table create ns.bad --schema "$tmp/s.json" --property "$kv" 2> "$tmp/v.err"; rc=$?
  set -e
  [ $rc = 2 ] && grep -qF "reserved" "$tmp/v.err" || fail "table create --property $kv: exit $rc, $(cat "$tmp/v.err")"
done
! "$floe" table describe ns.bad >/dev/null 2>&1 || fail "a refused create made the table"
[ "$(meta ns.t)" = "$loc" ] || fail "a refused value changed the table"

# four writers at once: every property lands (commit retry on conflict)
pids=()
for i in 1 2 3 4; do
  "$floe" table properties ns.t set "c$i=$i" >/dev/null 2>"$tmp/c$i.err" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent properties set failed: $(cat "$tmp"/c*.err)"; done
[ "$(mq ns.t '[m["properties"].get("c%d" % i) for i in range(1, 5)]')" = "['1', '2', '3', '4']" ] ||
  fail "concurrent sets: $(mq ns.t 'm["properties"]')"

# a folder is shown, not changed
folder=$(dirname "$(dirname "$(meta ns.t)")")
"$floe" table properties "$folder" | grep -qx 'c1 = 1' || fail "properties of a folder"
set +e
"$floe" table properties "$folder" set x=1 2>"$tmp/f.err"; rc=$?
set -e
[ $rc = 1 ] && grep -q 'needs its catalog name' "$tmp/f.err" || fail "set on a folder: exit $rc, $(cat "$tmp/f.err")"

# the next append honours a property set this way
"$floe" table properties ns.t set write.parquet.compression-codec=gzip >/dev/null
python3 -c '
import random
random.seed(7)
for j in range(60): print("{\"k\":\"%s\",\"v\":%d}" % ("abc"[j % 3], random.randint(0, 1000)))' > "$tmp/in1.ndjson"
"$floe" append ns.t "$tmp/in1.ndjson" >/dev/null
f=$("$floe" files ns.t --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["path"].removeprefix("file://"))')
codec=$(cd "$js" && node duckdb_meta.mjs "$f" | python3 -c 'import json,sys; print(sorted({r["compression"] for r in json.load(sys.stdin)["metadata"]}))')
[ "$codec" = "['GZIP']" ] || fail "append after write.parquet.compression-codec=gzip wrote $codec"

# ---- sort order -------------------------------------------------------------------------
set +e
"$floe" rewrite ns.t --strategy sort 2>"$tmp/ns.err"; rc=$?
set -e
[ $rc != 0 ] && grep -q 'floe table sort-order NS.NAME set' "$tmp/ns.err" ||
  fail "rewrite --strategy sort of an unsorted table: exit $rc, $(cat "$tmp/ns.err")"

"$floe" table sort-order ns.t set 'v DESC, bucket(4, k)' --json > "$tmp/s1.json"
grep -q '"sort_order_id":1,"sort_order":"v DESC NULLS LAST, bucket(4, k) ASC NULLS FIRST","changed":true' "$tmp/s1.json" ||
  fail "sort-order set --json: $(cat "$tmp/s1.json")"
[ "$(mq ns.t 'm["default-sort-order-id"], [o["fields"] for o in m["sort-orders"] if o["order-id"] == 1]')" = \
  "(1, [[{'transform': 'identity', 'source-id': 2, 'direction': 'desc', 'null-order': 'nulls-last'}, {'transform': 'bucket[4]', 'source-id': 1, 'direction': 'asc', 'null-order': 'nulls-first'}]])" ] ||
  fail "sort order in the metadata: $(mq ns.t 'm["default-sort-order-id"], m["sort-orders"]')"
loc=$(meta ns.t)
"$floe" table sort-order ns.t set 'v DESC NULLS LAST, bucket(4, k) ASC' --json | grep -q '"changed":false' ||
  fail "the same order again reported a change"
[ "$(meta ns.t)" = "$loc" ] || fail "the same order again committed"
"$floe" table sort-order ns.t set 'k' >/dev/null
[ "$(mq ns.t 'm["default-sort-order-id"], len(m["sort-orders"])')" = "(2, 3)" ] || fail "a second order: $(mq ns.t 'm["sort-orders"]')"
"$floe" table sort-order ns.t set 'v DESC, bucket(4, k)' >/dev/null
[ "$(mq ns.t 'm["default-sort-order-id"], len(m["sort-orders"])')" = "(1, 3)" ] || fail "an earlier order did not keep its id"
"$floe" table sort-order ns.t clear >/dev/null
[ "$(mq ns.t 'm["default-sort-order-id"]')" = 0 ] || fail "clear: default-sort-order-id $(mq ns.t 'm["default-sort-order-id"]')"
"$floe" table describe ns.t | grep -q '^sorted by: *(unsorted)$' || fail "describe after clear"
set +e
"$floe" table sort-order ns.t set 'nosuch DESC' 2>"$tmp/bad.err"; rc=$?
set -e
[ $rc = 2 ] && grep -q '"nosuch": unknown column' "$tmp/bad.err" || fail "bad sort column: exit $rc, $(cat "$tmp/bad.err")"

"$floe" table sort-order ns.t set 'v DESC' >/dev/null
"$floe" table describe ns.t | grep -q '^sorted by: *v DESC NULLS LAST (order 3)$' || fail "describe text: $("$floe" table describe ns.t | grep sorted)"
[ "$("$floe" table describe ns.t --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["sort_order_id"], d["sort_order"])')" = "3 v DESC NULLS LAST" ] ||
  fail "describe --json sort order"

# rewrite --strategy sort uses the table's order: DuckDB reads the output back sorted
for i in 2 3; do
  python3 -c '
import random, sys
random.seed(int(sys.argv[1]))
for j in range(60): print("{\"k\":\"%s\",\"v\":%d}" % ("abc"[j % 3], random.randint(0, 1000)))' $i > "$tmp/in$i.ndjson"
  "$floe" append ns.t "$tmp/in$i.ndjson" >/dev/null
done
"$floe" rewrite ns.t --strategy sort -o rewrite-all=true --quiet --json > "$tmp/rw.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["rewritten_data_files_count"]==3 and d["added_data_files_count"]==1, d' "$tmp/rw.json" ||
  fail "sort rewrite: $(cat "$tmp/rw.json")"
f=$("$floe" files ns.t --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["path"].removeprefix("file://"))')
(cd "$js" && node --input-type=module -e '
import { DuckDBInstance } from "@duckdb/node-api";
const db = await DuckDBInstance.create(":memory:"); const c = await db.connect();
await c.run("SET threads=1");
const r = await c.runAndReadAll(`SELECT v FROM read_parquet(${JSON.stringify(process.argv[1])})`);
const v = r.getRows().map((x) => Number(x[0]));
if (v.length !== 180) { console.error(`${v.length} rows`); process.exit(1); }
for (let i = 1; i < v.length; i++) if (v[i - 1] < v[i]) { console.error(`row ${i}: ${v[i - 1]} < ${v[i]}`); process.exit(1); }
' "$f") || fail "the sorted rewrite's file is not in v DESC order"

# times and ids past 64 bits are usage errors, never saturated to the far future
for cmd in "expire ns.t --older-than 99999999999999999999 --dry-run" \
           "expire ns.t --snapshot-ids 99999999999999999999 --dry-run" \
           "snapshots rollback ns.t --to 99999999999999999999" \
           "scan ns.t --as-of 99999999999999999999" \
           "table upgrade ns.t --format-version 4294967298"; do
  set +e
  # shellcheck disable=SC2086
  "$floe" $cmd > /dev/null 2> "$tmp/big.err"; rc=$?
  set -e
  [ $rc = 2 ] && [ "$(wc -l < "$tmp/big.err")" = 1 ] || fail "$cmd: exit $rc, $(cat "$tmp/big.err")"
done

[ $fails = 0 ] || exit 1
echo "table_toolbox: ok"
