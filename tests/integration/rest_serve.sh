#!/usr/bin/env bash
# rest_serve.sh - floe serve and floe maintain on a REST catalog: `floe catalog serve`
# over a SQLite catalog is the REST server; `floe serve` (catalog = http://...) keeps its
# landing index and leases in a database of its own (state_db) and commits every landing
# compaction through the REST server; then `floe maintain --once`, `floe rewrite` and
# `floe expire` work on the table through it.
#
#  1. 4 clients post 3,000 events (keyed batches) to floe serve; a flush compacts them:
#     the table (read from the SQL side, past the REST server) holds every accepted event
#     exactly once, each snapshot carries floe.landing-ids, and the state database says
#     every landing file is committed (the catalog database holds no landing index);
#  2. a restart of floe serve and a second flush commit nothing again (the landing ids
#     in the table's history are checked on every commit);
#  3. floe maintain --once (expire, orphans, the landing lifecycle, which finds the
#     landing index in the state database and deletes the committed landing files)
#     through REST with the same state database (FLOE_STATE_DB) for its leases, then
#     floe rewrite and floe expire: the rows stay, expiry leaves one snapshot, the SQL
#     side agrees.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
command -v python3 >/dev/null || { echo "rest_serve: python3 missing, skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "rest_serve: sqlite3 missing, skipped"; exit 77; }
cpid=
stop_catalog() { if [ -n "$cpid" ]; then kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null || true; fi; }
trap 'stop_catalog; cleanup' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_CATALOG_URI FLOE_WAREHOUSE || true

mkdir -p "$tmp/wh"
FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_LOG=debug \
  "$FLOE" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/cport" 2>"$tmp/catalog.log" &
cpid=$!
for _ in $(seq 100); do [ -s "$tmp/cport" ] && break; sleep 0.1; done
[ -s "$tmp/cport" ] || fail "floe catalog serve did not start: $(cat "$tmp/catalog.log")"
base=http://127.0.0.1:$(cat "$tmp/cport")
rest() { FLOE_CATALOG_URI=$base FLOE_WAREHOUSE="$tmp/wh" FLOE_STATE_DB="$tmp/state.db" "$FLOE" "$@"; }
sql() { FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" "$@"; }
rows() { "$@" scan shop.events --columns event_id | wc -l; }

# ---------------------------------------------------------------------------------------
# 1. ingest and landing compaction committed through the REST server
# ---------------------------------------------------------------------------------------
rest namespace create shop >/dev/null
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 3000 --seed 5 -o "$tmp/events.ndjson" >/dev/null
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
catalog = $base
state_db = $tmp/state.db
[defaults]
seal_bytes = 64KB
seal_age = 1s
compact_bytes = 1GB
compact_age = 1h
[table shop.events]
schema = $tmp/schema.json
partition = event_type
CONF
start_server --config "$tmp/serve.conf"
python3 "$SERVE_DIR/client.py" --port-file "$tmp/port" --events "$tmp/events.ndjson" \
  --table shop.events --clients 4 --batch-size 100 --keys --out "$tmp/acks" || fail "client"
flush_wait
stop_server
grep -q 'POST /v1/[a-z/]*namespaces/shop/tables -> 200' "$tmp/catalog.log" ||
  fail "the table was not created through the REST server"
grep -q 'POST /v1/[a-z/]*namespaces/shop/tables/events -> 200' "$tmp/catalog.log" ||
  fail "no commit through the REST server"
[ "$(rows sql)" = 3000 ] || fail "the SQL side sees $(rows sql) rows, expected 3000"
[ "$(rows rest)" = 3000 ] || fail "the REST side sees $(rows rest) rows, expected 3000"
# (verify.py reads the table from <warehouse>/catalog.db: the REST server's database)
python3 "$SERVE_DIR/verify.py" \
  "$tmp/events.ndjson" 100 "$tmp/acks" "$tmp/wh" shop.events --all-acked --keys --table "$FLOE" ||
  fail "table check"
n=$(sqlite3 -cmd ".timeout 10000" "$tmp/state.db" "SELECT COUNT(*) FROM landing_files WHERE kind=1 AND state<>'committed'")
[ "$n" = 0 ] || fail "$n landing files not committed in the state database"
n=$(sqlite3 -cmd ".timeout 10000" "$tmp/state.db" "SELECT COUNT(*) FROM landing_files WHERE kind=1")
[ "$n" -gt 0 ] || fail "the state database holds no landing files"
if sqlite3 "$tmp/wh/catalog.db" "SELECT 1 FROM landing_files LIMIT 1" >/dev/null 2>&1; then
  fail "the REST server's catalog database holds a landing index"
fi
meta=$(curl -sf "$base/v1/namespaces/shop/tables/events") || fail "load through REST"
echo "$meta" | grep -q '"floe.landing-ids"' || fail "no floe.landing-ids in the snapshots' summaries"
snaps1=$(sql snapshots shop.events | grep -c '^[0-9]')

# ---------------------------------------------------------------------------------------
# 2. a restart commits nothing twice
# ---------------------------------------------------------------------------------------
start_server --config "$tmp/serve.conf"
flush_wait
stop_server
[ "$(rows sql)" = 3000 ] || fail "after a restart: $(rows sql) rows"
[ "$(sql snapshots shop.events | grep -c '^[0-9]')" = "$snaps1" ] || fail "a restart committed again"

# ---------------------------------------------------------------------------------------
# 3. maintenance through the REST server
# ---------------------------------------------------------------------------------------
cat > "$tmp/maint.conf" <<CONF
[defaults]
expire.older-than = 0s
expire.retain-last = 1
orphans.older-than = 0s
rewrite-manifests.min-manifests = 1
landing-lifecycle.age = 0s
CONF
rest maintain shop.events --once --schedule "$tmp/maint.conf" --json >"$tmp/maint.json" 2>"$tmp/maint.err" ||
  fail "maintain: $(cat "$tmp/maint.err")"
grep -q '"job":"expire".*"result":"ok"' "$tmp/maint.json" || fail "maintain: no expiry: $(cat "$tmp/maint.json")"
grep -q '"job":"orphans".*"result":"ok"' "$tmp/maint.json" || fail "maintain: no orphan removal: $(cat "$tmp/maint.json")"
# the landing lifecycle reads the landing index in the state database
grep -q '"job":"landing-lifecycle".*"result":"ok","detail":"[1-9][0-9]* landing and' "$tmp/maint.json" ||
  fail "maintain: the landing lifecycle deleted nothing: $(cat "$tmp/maint.json")"
if grep -q '"result":"failed"' "$tmp/maint.json"; then fail "a maintenance job failed: $(cat "$tmp/maint.json")"; fi
[ "$(rows sql)" = 3000 ] || fail "after maintain: $(rows sql) rows"
rest rewrite shop.events >/dev/null || fail "rewrite through REST"
rest expire shop.events --older-than 0s --retain-last 1 >/dev/null || fail "expire through REST"
[ "$(rows sql)" = 3000 ] || fail "after rewrite and expire: $(rows sql) rows"
[ "$(sql snapshots shop.events | grep -c '^[0-9]')" = 1 ] || fail "expire kept more than one snapshot"
echo "rest_serve: ok"
