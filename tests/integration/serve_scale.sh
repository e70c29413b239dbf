#!/usr/bin/env bash
# serve_scale.sh - scale-out on loopback: three ingest nodes (floe serve --role ingest)
# and three compaction workers (floe work) share one PostgreSQL (catalog, landing index,
# leases) and one bucket (the signature-checking S3 server of tests/js). Each ingest node
# takes a third of 8950 events from two clients (Idempotency-Keys), and the last 50 come
# in five requests, each sent to two nodes at once with one Idempotency-Key; the workers
# compact every node's landing files as they come; one worker (the first seen holding a
# partition lease) is killed with SIGKILL while it holds it. Afterwards:
#   - every acknowledged event is in the table exactly once (floe scan = the input, row for
#     row, by event_id: count and unique ids);
#   - no landing id is in two snapshots (floe.landing-ids), i.e. no landing file was
#     committed twice, and no partition was compacted by two workers at once; every
#     landing file of every ingest node is committed;
#   - the killed worker's lease ran out and another worker finished its partition;
#   - at least two workers committed snapshots.
# Skips (exit 77, "SKIPPED") only when PostgreSQL's server binaries are missing.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
serve_pg_s3
export FLOE_COMPACT_LEASE_MS=2000 FLOE_LOG=info

"$FLOE" gen --schema-out "$tmp/schema.json" > /dev/null
"$FLOE" gen --count 9000 --seed 31 -o "$tmp/events.ndjson" > /dev/null
node "$js/canon_ndjson.mjs" --schema "$tmp/schema.json" "$tmp/events.ndjson" > "$tmp/exp.ndjson"
# the last 50 events go in one racing request (below), the rest through the clients
head -n 8950 "$tmp/events.ndjson" > "$tmp/posted.ndjson"
tail -n 50 "$tmp/events.ndjson" > "$tmp/race.ndjson"
split -n l/3 -d "$tmp/posted.ndjson" "$tmp/part"

conf() { # ROLE: the shared configuration
  cat <<CONF
[server]
listen = 127.0.0.1:0
warehouse = s3://wh/scale
catalog = $FLOE_PG_URI
role = $1
wal_segment_size = 256KB
maintain = false
[defaults]
seal_bytes = 32KB
seal_age = 300ms
compact_bytes = 64KB
compact_age = 1s
[table shop.events]
schema = $tmp/schema.json
partition = event_type
schema_mode = strict
CONF
}
conf ingest > "$tmp/ingest.conf"
conf compactor > "$tmp/work.conf"

declare -A ipid wpid
start_ingest() { # I
  rm -f "$tmp/port$1"
  "$FLOE" serve --config "$tmp/ingest.conf" --node-id "i$1" --wal-dir "$tmp/wal$1" \
    --port-file "$tmp/port$1" 2>> "$tmp/ingest$1.log" &
  ipid[$1]=$!
  pids+=($!)
  for _ in $(seq 600); do
    [ -s "$tmp/port$1" ] && return 0
    kill -0 "${ipid[$1]}" 2>/dev/null || fail "ingest node $1 exited at start"
    sleep 0.05
  done
  fail "ingest node $1 did not start"
}
start_worker() { # W
  "$FLOE" work --config "$tmp/work.conf" --node-id "w$1" 2>> "$tmp/work$1.log" &
  wpid[$1]=$!
  pids+=($!)
}

start_ingest 1 # creates the table; the others find it
start_ingest 2
start_ingest 3
for w in 1 2 3; do start_worker $w; done

cpids=()
for i in 1 2 3; do
  python3 "$SERVE_DIR/client.py" --port-file "$tmp/port$i" --events "$tmp/part0$((i - 1))" \
    --table shop.events --clients 2 --batch-size 50 --keys --key-prefix "n$i-" --out "$tmp/acks$i" &
  cpids+=($!)
done

running() { # PID...: true while one of them runs (a finished, unwaited child is a zombie)
  local c st
  for c; do
    st=$(ps -o stat= -p "$c" 2>/dev/null || true)
    case $st in ""|Z*) ;; *) return 0 ;; esac
  done
  return 1
}
flush_all() {
  for i in 1 2 3; do
    curl -sf -XPOST "http://127.0.0.1:$(cat "$tmp/port$i")/v1/admin/flush" > /dev/null || fail "flush $i"
  done
}
# kill a worker while it holds a partition lease (polling; once the clients are done, the
# flushes make the last landing files, i.e. more jobs). Whichever worker it is: on a loaded
# machine one worker can take every job while another waits its turn (CI at load 20: worker
# 1 held no lease in 30 s).
killed=
flushed=
for _ in $(seq 600); do
  killed=$(pg_sql "SELECT split_part(owner, '/', 1) || ' ' || job FROM floe_leases WHERE owner ~ '^w[123]/' AND expires_at > (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint LIMIT 1" || true)
  [ -n "$killed" ] && break
  if [ -z "$flushed" ] && ! running "${cpids[@]}"; then flush_all; flushed=1; fi
  sleep 0.05
done
[ -n "$killed" ] || fail "no worker ever held a lease"
kw=${killed%% *}; kw=${kw#w}; killed_job=${killed#* }
kill -9 "${wpid[$kw]}"
wait "${wpid[$kw]}" 2>/dev/null || true
echo "serve_scale: killed worker $kw holding $killed_job"

for c in "${cpids[@]}"; do wait "$c" || fail "client"; done

# One Idempotency-Key sent to two nodes at once: one takes the request; the other answers
# 409 (the key is claimed by a node still working on it) or, if the first is done and its
# answer stored, that answer. A later retry on a third node gets the first answer. Five
# races of 10 events (without claims, most races take the key twice).
code_of() { python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); print(a["error"]["status"] if "error" in a else 200)' "$1"; }
batch() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("batch_id", ""))' "$1"; }
url() { echo "http://127.0.0.1:$(cat "$tmp/port$1")/v1/tables/shop.events/events"; }
split -l 10 -d "$tmp/race.ndjson" "$tmp/race-"
for r in 0 1 2 3 4; do
  body="$tmp/race-0$r"
  post() { # NODE: one retry-style post of the race's body to node N
    curl -s -o "$tmp/race3.json" -XPOST -H 'Content-Type: application/x-ndjson' \
      -H "Idempotency-Key: race-$r" --data-binary @"$body" "$(url "$1")" || fail "post"
  }
  # one curl, both transfers started together
  curl -s -Z --parallel-immediate -XPOST -H 'Content-Type: application/x-ndjson' \
    -H "Idempotency-Key: race-$r" --data-binary @"$body" \
    -o "$tmp/race1.json" "$(url 1)" -o "$tmp/race2.json" "$(url 2)" || fail "racing posts"
  codes="$(code_of "$tmp/race1.json") $(code_of "$tmp/race2.json")"
  case $codes in
    "200 409") taken=1 ;;
    "409 200") taken=2 ;;
    "200 200") [ "$(batch "$tmp/race1.json")" = "$(batch "$tmp/race2.json")" ] ||
                 fail "race $r: one key taken twice: $(cat "$tmp/race1.json") / $(cat "$tmp/race2.json")"
               taken=1 ;;
    *) fail "race $r: answered $codes: $(cat "$tmp/race1.json") / $(cat "$tmp/race2.json")" ;;
  esac
  first=$(batch "$tmp/race$taken.json")
  [ -n "$first" ] || fail "race $r: no batch id in $(cat "$tmp/race$taken.json")"
  for _ in $(seq 50); do
    post 3
    [ "$(code_of "$tmp/race3.json")" = 409 ] || break
    sleep 0.2
  done
  [ "$(batch "$tmp/race3.json")" = "$first" ] ||
    fail "race $r: the retry on node 3 answered $(cat "$tmp/race3.json") (want batch $first)"
  echo "serve_scale: race $r: answered $codes; the retry on node 3 got batch $first"
done
flush_all
for _ in $(seq 240); do
  [ "$(landing_uncommitted)" = 0 ] && break
  sleep 0.25
done
n=$(landing_uncommitted)
[ "$n" = 0 ] || fail "$n landing files not committed by the workers"

for i in 1 2 3; do
  kill -TERM "${ipid[$i]}"; wait "${ipid[$i]}" || fail "ingest node $i: exit $?"
done
for w in 1 2 3; do
  [ "$w" = "$kw" ] && continue
  kill -TERM "${wpid[$w]}"; wait "${wpid[$w]}" || fail "worker $w: exit $?"
done

acked=$(cat "$tmp"/acks*/ack-*.jsonl | wc -l)
want=0
for i in 0 1 2; do want=$((want + ($(wc -l < "$tmp/part0$i") + 49) / 50)); done
[ "$acked" = "$want" ] || fail "$acked of $want batches acknowledged"
export FLOE_CATALOG_URI=$FLOE_PG_URI FLOE_WAREHOUSE=s3://wh/scale
"$FLOE" scan shop.events --format canonical > "$tmp/got.ndjson" 2> "$tmp/scan.err" ||
  fail "scan: $(cat "$tmp/scan.err")"
node "$js/compare.mjs" "$tmp/exp.ndjson" "$tmp/got.ndjson" --sort-key event_id > "$tmp/cmp.out" 2>&1 ||
  fail "the table differs from the acknowledged events: $(head -c 2000 "$tmp/cmp.out")"
[ "$(wc -l < "$tmp/got.ndjson")" = 9000 ] || fail "$(wc -l < "$tmp/got.ndjson") rows, want 9000"
[ "$(grep -o '"event_id":"[^"]*"' "$tmp/got.ndjson" | sort -u | wc -l)" = 9000 ] ||
  fail "duplicate event ids in the table"

"$FLOE" snapshots shop.events --json > "$tmp/snaps.json" || fail "snapshots"
node -e '
  const snaps = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
  const seen = new Map(), nodes = new Set(), ingest = new Set()
  for (const s of snaps) {
    const ids = (s.summary["floe.landing-ids"] || "").split(",").filter(Boolean)
    if (ids.length) nodes.add(s.summary["floe.node"])
    for (const id of ids) {
      if (seen.has(id)) { console.log("landing id " + id + " in two snapshots"); process.exit(1) }
      seen.set(id, s.snapshot_id); ingest.add(id.replace(/-[0-9]+$/, ""))
    }
  }
  if (ingest.size !== 3) { console.log("landing files of " + [...ingest] + " only"); process.exit(1) }
  if (nodes.size < 2) { console.log("only " + [...nodes] + " committed"); process.exit(1) }
  console.log(snaps.length + " snapshots, " + seen.size + " landing files, committed by " + [...nodes].sort())
' "$tmp/snaps.json" > "$tmp/ids.out" || fail "snapshots: $(cat "$tmp/ids.out")"
n=$(pg_sql "SELECT COUNT(*) FROM landing_files WHERE kind=1")
grep -q " $n landing files" "$tmp/ids.out" || fail "index has $n landing files, snapshots: $(cat "$tmp/ids.out")"
echo "serve_scale: $(cat "$tmp/ids.out")"
echo "serve_scale: ok"
