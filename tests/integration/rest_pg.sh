#!/usr/bin/env bash
# rest_pg.sh - several `floe catalog serve` processes on one PostgreSQL catalog
# (tests/lib/pg.sh starts a throwaway server):
#
#  1. 2 servers x 4 clients commit set-properties to one table at once, 15 commits each,
#     no requirements: every commit answered 200 lands (120 properties; none lost to the
#     compare-and-swap races between the servers, which retry on fresh metadata);
#  2. two clients race assert-ref-snapshot-id on main through the two servers, each adding
#     a snapshot: exactly one 200, the other 409 CommitFailedException;
#  3. a transaction through server A with an Idempotency-Key, retried through server B:
#     B replays A's answer (the answers live in the shared database) and commits nothing;
#  4. a transaction through B whose second table's requirement fails leaves both tables
#     as they were, seen through A.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v curl >/dev/null || { echo "rest_pg: curl missing, skipped"; exit 77; }
source "$src/tests/lib/pg.sh"
pg_start_test rest_pg

tmp=$(mktemp -d)
pids=()
PG_PREV_TRAP2=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$tmp"; eval "$PG_PREV_TRAP2"' EXIT
fail() {
  echo "rest_pg: FAIL: $*" >&2
  for f in "$tmp"/server*.log; do [ -f "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" >&2; done
  exit 1
}
jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

export FLOE_CATALOG_URI=$FLOE_PG_URI FLOE_WAREHOUSE=$tmp/wh FLOE_CATALOG=restpg
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
for s in a b; do
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port_$s" 2>"$tmp/server_$s.log" &
  pids+=($!)
done
for s in a b; do
  for _ in $(seq 300); do [ -s "$tmp/port_$s" ] && break; sleep 0.1; done
  [ -s "$tmp/port_$s" ] || fail "server $s did not start"
done
A=http://127.0.0.1:$(cat "$tmp/port_a")
B=http://127.0.0.1:$(cat "$tmp/port_b")
post() { curl -s -o "$tmp/body" -w '%{http_code}' -X POST "$1" -H 'Content-Type: application/json' "${@:3}" -d "$2"; }

[ "$(post "$A/v1/namespaces" '{"namespace":["pg"]}')" = 200 ] || fail "create namespace: $(cat "$tmp/body")"
"$floe" gen --schema-out "$tmp/schema.json"
"$floe" gen --seed 3 --count 200 -o "$tmp/ev.ndjson" >/dev/null
for t in t1 t2 t3; do
  [ "$(post "$B/v1/namespaces/pg/tables" "{\"name\":\"$t\",\"schema\":$(cat "$tmp/schema.json")}")" = 200 ] ||
    fail "create $t: $(cat "$tmp/body")"
done

# 1. commits from both servers at once
client() { # client SERVER_URL ID
  local ok=0
  for i in $(seq 15); do
    code=$(curl -H 'Content-Type: application/json' -s -o /dev/null -w '%{http_code}' -X POST "$1/v1/namespaces/pg/tables/t1" \
      -d "{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"c$2-$i\":\"x\"}}]}")
    [ "$code" = 200 ] && ok=$((ok + 1))
  done
  echo "$ok" > "$tmp/ok_$2"
}
cp=()
for c in 0 1 2 3; do client "$A" "a$c" & cp+=($!); client "$B" "b$c" & cp+=($!); done
for p in "${cp[@]}"; do wait "$p"; done
oks=$(cat "$tmp"/ok_* | awk '{s+=$1} END {print s}')
props=$(curl -s "$A/v1/namespaces/pg/tables/t1" |
  python3 -c 'import json,sys; p=json.load(sys.stdin)["metadata"]["properties"]; print(sum(1 for k in p if k.startswith("c")))')
[ "$oks" = "$props" ] || fail "$oks commits answered 200 but $props landed"
[ "$oks" -ge 100 ] || fail "only $oks of 120 commits answered 200"
echo "rest_pg: $oks concurrent commits through 2 servers, all landed"

# 2. a race on assert-ref-snapshot-id through the two servers
"$floe" append pg.t2 "$tmp/ev.ndjson" >/dev/null
state() { curl -s "$A/v1/namespaces/pg/tables/$1" | python3 -c '
import json, sys
d = json.load(sys.stdin); m = d["metadata"]
snaps = m.get("snapshots") or [{"manifest-list": None}]
print(d["metadata-location"], m["refs"].get("main", {}).get("snapshot-id"), m["table-uuid"],
      m["last-sequence-number"], snaps[-1]["manifest-list"])'; }
read -r _ snap2 uuid2 seq2 ml2 <<< "$(state t2)"
race_body() { # race_body SNAPSHOT_ID (its manifest list a copy of t2's current one: its own)
  cp "${ml2#file://}" "${ml2#file://}.$1.avro"
  printf '{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":%s}],"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":%s,"parent-snapshot-id":%s,"sequence-number":%s,"timestamp-ms":%s,"manifest-list":"%s","summary":{"operation":"append"},"schema-id":0}},{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":%s}]}' \
    "$snap2" "$1" "$snap2" $((seq2 + 1)) "$(date +%s%3N)" "$ml2.$1.avro" "$1"
}
(post "$A/v1/namespaces/pg/tables/t2" "$(race_body 7001)" > "$tmp/race_a"; cp "$tmp/body" "$tmp/race_a.body") &
ra=$!
(sleep 0; curl -H 'Content-Type: application/json' -s -o "$tmp/race_b.body" -w '%{http_code}' -X POST "$B/v1/namespaces/pg/tables/t2" -d "$(race_body 7002)" > "$tmp/race_b") &
rb=$!
wait $ra $rb
codes=$(sort "$tmp/race_a" "$tmp/race_b" | tr '\n' ' ')
[ "$codes" = "200 409 " ] || fail "race: $codes ($(cat "$tmp/race_a.body" "$tmp/race_b.body"))"
echo "rest_pg: race through two servers: one 200, one 409"

# 3. a transaction through A, retried with its key through B
read -r loc1 snap1 uuid1 _ _ <<< "$(state t1)"
read -r loc2 snap2 uuid2 _ _ <<< "$(state t2)"
change() { printf '{"identifier":{"namespace":["pg"],"name":"%s"},"requirements":[{"type":"assert-table-uuid","uuid":"%s"}],"updates":[{"action":"set-properties","updates":{"tx":"%s"}}]}' "$@"; }
tx="{\"table-changes\":[$(change t1 "$uuid1" 1),$(change t2 "$uuid2" 1)]}"
key=0190f7a1-0000-7000-8000-00000000abcd
[ "$(post "$A/v1/transactions/commit" "$tx" -H "Idempotency-Key: $key")" = 204 ] || fail "tx through A: $(cat "$tmp/body")"
s1="$(state t1) $(state t2)"
[ "$(post "$B/v1/transactions/commit" "$tx" -H "Idempotency-Key: $key")" = 204 ] || fail "retry through B: $(cat "$tmp/body")"
[ "$(state t1) $(state t2)" = "$s1" ] || fail "the retry through B committed again"
echo "rest_pg: a transaction retried through the other server was answered from the record"

# 4. a failed requirement in a transaction through B: nothing moves
read -r loc3 _ uuid3 _ _ <<< "$(state t3)"
bad="{\"table-changes\":[$(change t1 "$uuid1" 2),$(change t3 00000000-0000-0000-0000-000000000000 2)]}"
[ "$(post "$B/v1/transactions/commit" "$bad")" = 409 ] || fail "failed transaction: $(cat "$tmp/body")"
[ "$(state t1) $(state t2)" = "$s1" ] || fail "a failed transaction moved t1 or t2"
[ "$(state t3 | cut -d' ' -f1)" = "$loc3" ] || fail "a failed transaction moved t3"
echo "rest_pg: ok"
