#!/usr/bin/env bash
# rest_maintain_etag.sh - floe maintain through a REST catalog reloads its tables with
# If-None-Match (issue 21, client: load with ETag): the first load of a table is a 200 with
# an ETag, the reloads of the jobs after it send that ETag and an unchanged table costs a
# 304; after a commit the next load is a 200 again. Counted by a proxy in front of
# floe catalog serve (lib/status_proxy.py).
name=rest_maintain_etag
source "$(dirname "$0")/lib/rest_serve_common.sh"
echo '{"type":"struct","fields":[{"id":1,"name":"v","required":false,"type":"long"}]}' > "$tmp/s.json"
"$floe" namespace create ns >/dev/null
"$floe" table create ns.t --schema "$tmp/s.json" >/dev/null
for i in 1 2 3; do echo "{\"v\":$i}" > "$tmp/in.ndjson"; "$floe" append ns.t "$tmp/in.ndjson" >/dev/null; done
start_server
python3 "$(dirname "$0")/lib/status_proxy.py" "$base" 0 "$tmp/proxy.log" 2>"$tmp/proxy.err" &
proxy=$!
trap 'kill "$proxy" 2>/dev/null; [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/proxy.log.port" ] && break; sleep 0.1; done
[ -s "$tmp/proxy.log.port" ] || fail "the proxy did not start: $(cat "$tmp/proxy.err")"
export FLOE_CATALOG_URI=http://127.0.0.1:$(cat "$tmp/proxy.log.port") FLOE_STATE_DB=$tmp/state.db

loads() { grep -c "^GET /v1/\(default/\)\?namespaces/ns/tables/t $1 inm=$2" "$tmp/proxy.log" || true; }
"$floe" maintain ns.t --once > "$tmp/m1.out" 2>&1 || fail "maintain: $(cat "$tmp/m1.out")"
[ "$(loads 200 None)" = 1 ] || fail "first loads: $(grep tables/t "$tmp/proxy.log")"
[ "$(loads 304 '"')" -ge 2 ] || fail "no reload answered 304: $(grep tables/t "$tmp/proxy.log")"
[ "$(grep "tables/t " "$tmp/proxy.log" | grep -vc ' 304 ' || true)" = 1 ] ||
  fail "an unchanged table was sent again: $(grep tables/t "$tmp/proxy.log")"

# a commit changes the ETag: the next load is a 200
: > "$tmp/proxy.log"
echo '{"v":9}' > "$tmp/in.ndjson"
"$floe" append ns.t "$tmp/in.ndjson" >/dev/null
"$floe" maintain ns.t --once > "$tmp/m2.out" 2>&1 || fail "maintain: $(cat "$tmp/m2.out")"
[ "$(loads 200 None)" -ge 1 ] || fail "after a commit: $(grep tables/t "$tmp/proxy.log")"
[ "$(loads 304 '"')" -ge 2 ] || fail "after a commit, no reload answered 304: $(grep tables/t "$tmp/proxy.log")"
server_alive
echo "$name: ok"
