#!/usr/bin/env bash
# floe serve while another process drops a table it serves (adversary finding adv24b 17).
# An accepted event is committed exactly once or sits in the quarantine with its reason,
# and a flush completes:
# - auto_create (no --config): the table is created again with the schema the server
#   holds (logged), and the events posted since the drop are committed into it;
# - the same after a drop without --purge: the old table's files still fill the location,
#   so it cannot be created there; the events go to the quarantine with the reason, and
#   later posts are answered 404;
# - auto_create = false: the events go to the quarantine ("table app.events was dropped"),
#   later posts are answered 404, and once the table is created again they are taken.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG FLOE_CATALOG_TYPE || true
mkdir -p "$tmp/wh"

# post BODY [STATUS]: POST to app.events, expect STATUS (200), flush when taken
post() {
  code=$(curl -s -o "$tmp/answer" -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/v1/tables/app.events/events" \
    -H 'Content-Type: application/x-ndjson' --data-binary "$1")
  [ "$code" = "${2:-200}" ] || fail "POST $1: $code $(cat "$tmp/answer")"
  [ "$code" != 200 ] || flush_wait
}
# the quarantined records of app.events with their reasons, as id<TAB>reason lines
quarantined() {
  find "$tmp/wh/_quarantine" -type f -name '*.ndjson' -exec cat {} + 2>/dev/null |
    python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    print("%s\t%s" % (json.loads(e["record"])["id"], e["reason"]))'
}
ids() { "$FLOE" scan app.events | python3 -c 'import json,sys; print(sorted(json.loads(l)["id"] for l in sys.stdin))'; }

# -- auto_create: created again from the served schema ----------------------------------
start_server --warehouse "$tmp/wh" --catalog "$tmp/wh/catalog.db" --listen 127.0.0.1:0
post '{"id":0,"ts":"2026-12-01T00:00:00Z"}'
"$FLOE" table drop app.events --purge > /dev/null
post '{"id":1,"ts":"2026-12-01T00:00:00Z"}'
grep -q "table app.events was dropped while served; created it again" "$tmp/server.log" ||
  fail "no log line for the re-creation"
[ "$(ids)" = "[1]" ] || fail "after the re-creation: $(ids)"
[ -z "$(quarantined)" ] || fail "quarantined: $(quarantined)"

# -- auto_create, dropped without --purge: its files keep the location ------------------
"$FLOE" table drop app.events > /dev/null
post '{"id":2,"ts":"2026-12-01T00:00:00Z"}'
q=$(quarantined)
case "$q" in
  "2	table app.events was dropped (and cannot be created again: "*"already holds files"*) ;;
  *) fail "quarantine after a drop without --purge: $q" ;;
esac
post '{"id":3,"ts":"2026-12-01T00:00:00Z"}' 404
grep -q "table app.events was dropped" "$tmp/answer" || fail "404 answer: $(cat "$tmp/answer")"
stop_server
rm -rf "$tmp/wh/_quarantine" "$tmp/wh/app/events"

# -- auto_create = false: quarantined, 404, taken again once the table exists -----------
"$FLOE" table create app.events --schema <(echo '{"type":"struct","fields":[
  {"id":1,"name":"id","required":false,"type":"long"},
  {"id":2,"name":"ts","required":false,"type":"timestamptz"}]}') > /dev/null
printf '[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\ncatalog = %s\nauto_create = false\n' \
  "$tmp/wh" "$tmp/wh/catalog.db" > "$tmp/serve.conf"
start_server --config "$tmp/serve.conf"
post '{"id":10,"ts":"2026-12-01T00:00:00Z"}'
"$FLOE" table drop app.events --purge > /dev/null
post '{"id":11,"ts":"2026-12-01T00:00:00Z"}'
[ "$(quarantined)" = "11	table app.events was dropped" ] || fail "quarantine: $(quarantined)"
post '{"id":12,"ts":"2026-12-01T00:00:00Z"}' 404
"$FLOE" table create app.events --schema <(echo '{"type":"struct","fields":[
  {"id":1,"name":"id","required":false,"type":"long"},
  {"id":2,"name":"ts","required":false,"type":"timestamptz"}]}') > /dev/null
post '{"id":13,"ts":"2026-12-01T00:00:00Z"}'
[ "$(ids)" = "[13]" ] || fail "after the table was created again: $(ids)"
stop_server
echo "serve_dropped_table: ok"
