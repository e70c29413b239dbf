#!/bin/bash
# rest_idem_two_servers.sh - one Idempotency-Key sent to two `floe catalog serve` processes
# on one SQLite catalog at the same moment (a retry a load balancer sends to another server
# while the first request still runs): both answer with the first's answer (a create's 200
# with the one table's uuid, a rename's or drop's 204, a namespace create's 200), never the
# 409 / 404 / 400 of the request that lost the race, and the change is made once
# (docs/REST.md, Idempotency-Key; adversary adv21h H5).
name=rest_idem_two_servers
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }
"$floe" namespace create s >/dev/null
start_server
base1=$base pid1=$pid
rm -f "$tmp/port"
"$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/server2.log" &
pid2=$!
trap 'kill $pid1 $pid2 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the second server did not start: $(cat "$tmp/server2.log")"
base2=http://127.0.0.1:$(cat "$tmp/port")

# race METHOD PATH [BODY]: the request with one fresh key to both servers at once; the two
# statuses in $got ("S1 S2"), the bodies in $tmp/b1, $tmp/b2
race() {
  local m=$1 p=$2 k
  shift 2
  k=$(python3 -c 'import uuid; print(uuid.uuid4())')
  local curls=()
  for n in 1 2; do
    local b=$base1
    [ $n = 2 ] && b=$base2
    curl -s -o "$tmp/b$n" -w '%{http_code}' -H 'Content-Type: application/json' \
      -H "Idempotency-Key: $k" -X "$m" "$b$p" ${1+-d "$1"} > "$tmp/c$n" &
    curls+=($!)
  done
  wait "${curls[@]}" || true
  got="$(cat "$tmp/c1") $(cat "$tmp/c2")"
}
uuid_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["table-uuid"])' "$1" 2>/dev/null || echo none; }

rounds=${ROUNDS:-12}
for i in $(seq "$rounds"); do
  race POST /v1/namespaces/s/tables "{\"name\":\"t$i\",\"schema\":$id_schema}"
  if [ "$got" != "200 200" ]; then
    soft "round $i: keyed create on two servers answered $got: $(head -c 200 "$tmp/b1") / $(head -c 200 "$tmp/b2")"
  elif [ "$(uuid_of "$tmp/b1")" != "$(uuid_of "$tmp/b2")" ]; then
    soft "round $i: the two answers of one keyed create name two tables"
  fi
  race POST /v1/tables/rename "{\"source\":{\"namespace\":[\"s\"],\"name\":\"t$i\"},\"destination\":{\"namespace\":[\"s\"],\"name\":\"u$i\"}}"
  [ "$got" = "204 204" ] || soft "round $i: keyed rename on two servers answered $got: $(head -c 200 "$tmp/b1") / $(head -c 200 "$tmp/b2")"
  race DELETE "/v1/namespaces/s/tables/u$i?purgeRequested=true"
  [ "$got" = "204 204" ] || soft "round $i: keyed purge on two servers answered $got: $(head -c 200 "$tmp/b1") / $(head -c 200 "$tmp/b2")"
  race POST /v1/namespaces "{\"namespace\":[\"n$i\"]}"
  [ "$got" = "200 200" ] || soft "round $i: keyed namespace create on two servers answered $got: $(head -c 200 "$tmp/b1") / $(head -c 200 "$tmp/b2")"
  race DELETE "/v1/namespaces/n$i"
  [ "$got" = "204 204" ] || soft "round $i: keyed namespace drop on two servers answered $got: $(head -c 200 "$tmp/b1") / $(head -c 200 "$tmp/b2")"
done
# each change made once: no table left in s, no namespace n*
base=$base1
expect 200 x GET /v1/namespaces/s/tables
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(1 if d["identifiers"] else 0)' "$tmp/body" ||
  soft "tables left in s: $(head -c 300 "$tmp/body")"
expect 200 x GET /v1/namespaces
grep -q '"n[0-9]' "$tmp/body" && soft "namespaces left: $(head -c 300 "$tmp/body")"
kill -0 "$pid1" 2>/dev/null && kill -0 "$pid2" 2>/dev/null || fail "a server died"
[ "$fails" = 0 ] || fail "$fails of $((rounds * 5)) raced requests got another answer than the first's"
echo "$name: ok ($rounds rounds of 5 keyed requests raced on two servers)"
