#!/usr/bin/env bash
# rest_serve_auth.sh - floe serve, its maintenance and floe maintain on a REST catalog
# that checks bearer tokens: `floe catalog serve --tokens` is the REST server, a stand-in
# identity provider hands out its token for OAuth2 client credentials.
#
#  1. floe serve with [catalog] credential + oauth2-server-uri + scope: asks the identity
#     provider for a token (client_credentials, the configured scope), creates the table
#     and commits every landing compaction through the server with it; its maintenance
#     thread runs jobs on the table through its own catalog handle; neither secret
#     appears in floe serve's log;
#  2. floe serve with [catalog] token (a bearer token) and header.*: ingests again;
#     /healthz reports the REST server (catalog) and the state database (state_db), and
#     50 /healthz ask the REST server at most twice (the prober asks every 5 s); a REST
#     server that hangs (SIGSTOP) makes catalog fail (degraded, floe_up 0) until it
#     answers again; with the catalog given by --catalog, SIGHUP reloads the file;
#  3. floe maintain --once with the same settings in a floe.conf [catalog.NAME] entry;
#  4. a wrong client secret, a wrong token, no credential at all: floe serve stops at
#     start with a message naming the refusal (HTTP 401 / the token request), not the
#     secrets; [catalog] settings with a SQL catalog and an unknown [catalog] key are
#     configuration errors.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
command -v python3 >/dev/null || { echo "rest_serve_auth: python3 missing, skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "rest_serve_auth: sqlite3 missing, skipped"; exit 77; }
cpid= idp=
stop_bg() {
  for p in $cpid $idp; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
}
trap 'stop_bg; cleanup' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_CATALOG_URI FLOE_WAREHOUSE \
  FLOE_CATALOG_TOKEN FLOE_CATALOG_CREDENTIAL FLOE_STATE_DB || true
SERVE_TOKEN=serve-token-0a1b2c3d
IDP_SECRET=idp-secret-4e5f6a7b

mkdir -p "$tmp/wh"
cat > "$tmp/tokens.conf" <<EOF
[token serve]
secret = $SERVE_TOKEN
grants = shop.*
[token admin]
secret = admin-token-99887766
grants = *
EOF
chmod 600 "$tmp/tokens.conf"  # it holds secrets: catalog serve refuses one others may read
FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_LOG=debug \
  "$FLOE" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/cport" --tokens "$tmp/tokens.conf" \
  2>"$tmp/catalog.log" &
cpid=$!
wait_for 60 '[ -s "$tmp/cport" ]' || fail "floe catalog serve did not start: $(cat "$tmp/catalog.log")"
base=http://127.0.0.1:$(cat "$tmp/cport")

# the identity provider: client_credentials for floe-serve:$IDP_SECRET -> the serve token
cat > "$tmp/idp.py" <<'EOF'
import sys, urllib.parse
sys.path.insert(0, sys.argv[5])
from json_http import JsonHandler, serve
log = open(sys.argv[2], "a")
class H(JsonHandler):
    def do_POST(self):
        form = urllib.parse.parse_qs(self.body().decode())
        ok = self.path == "/token" and form.get("grant_type") == ["client_credentials"] and \
            form.get("client_id") == ["floe-serve"] and form.get("client_secret") == [sys.argv[3]]
        log.write("POST %s scope=%s %s\n" % (self.path, form.get("scope"), "ok" if ok else "refused"))
        log.flush()
        if ok:
            return self.answer(200, {"access_token": sys.argv[4], "token_type": "bearer",
                                     "expires_in": 3600})
        self.answer(401, {"error": "invalid_client", "error_description": "bad client"})
serve(H, sys.argv[1])
EOF
python3 "$tmp/idp.py" "$tmp/idp.port" "$tmp/idp.log" "$IDP_SECRET" "$SERVE_TOKEN" "$SERVE_DIR/../lib" &
idp=$!
wait_for 60 '[ -s "$tmp/idp.port" ]' || fail "the identity provider did not start"
idpbase=http://127.0.0.1:$(cat "$tmp/idp.port")

sql() { FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" "$@"; }
rows() { sql scan shop.events --columns event_id | wc -l; }
FLOE_CATALOG_URI=$base FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG_TOKEN=admin-token-99887766 \
  "$FLOE" namespace create shop >/dev/null || fail "namespace create through REST"
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 600 --seed 7 -o "$tmp/events.ndjson" >/dev/null
"$FLOE" gen --count 400 --seed 8 -o "$tmp/events2.ndjson" >/dev/null

# serve.conf with the [catalog] lines given as $1
write_conf() {
  cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
catalog = $base
state_db = $tmp/state.db
[catalog]
$1
[defaults]
seal_bytes = 64KB
seal_age = 1s
compact_bytes = 1GB
compact_age = 1h
[table shop.events]
schema = $tmp/schema.json
partition = event_type
[maintain]
start-delay = 0s
tick = 200ms
run-log = $tmp/runs.jsonl
expire.interval = 1s
expire.older-than = 1h
rewrite-manifests.interval = 1s
CONF
}
post() {
  python3 "$SERVE_DIR/client.py" --port-file "$tmp/port" --events "$1" \
    --table shop.events --clients 2 --batch-size 100 --out "$tmp/acks" || fail "client"
}

# ---------------------------------------------------------------------------------------
# 1. OAuth2 client credentials
# ---------------------------------------------------------------------------------------
write_conf "credential = floe-serve:$IDP_SECRET
oauth2-server-uri = $idpbase/token
scope = catalog-rw"
start_server --config "$tmp/serve.conf"
post "$tmp/events.ndjson"
flush_wait
grep -q "^POST /token scope=\['catalog-rw'\] ok" "$tmp/idp.log" || fail "no token request with the scope: $(cat "$tmp/idp.log")"
grep -q 'POST /v1/[a-z/]*namespaces/shop/tables -> 200' "$tmp/catalog.log" ||
  fail "the table was not created through the REST server"
grep -q 'POST /v1/[a-z/]*namespaces/shop/tables/events -> 200' "$tmp/catalog.log" ||
  fail "no commit through the REST server"
if grep -q -- '-> 401' "$tmp/catalog.log"; then fail "a request without the token: $(grep -- '-> 401' "$tmp/catalog.log" | head -3)"; fi
[ "$(rows)" = 600 ] || fail "the table holds $(rows) rows, expected 600"
# the maintenance thread works on the table through its own handle (with the token)
wait_for 60 'grep -q '\''"table":"shop.events","job":"expire".*"result":"ok"'\'' "$tmp/runs.jsonl" 2>/dev/null' ||
  fail "no maintenance run through REST: $(cat "$tmp/runs.jsonl" 2>/dev/null)"
if grep -q '"result":"failed"' "$tmp/runs.jsonl"; then fail "a maintenance job failed: $(grep failed "$tmp/runs.jsonl" | head -3)"; fi
stop_server
if grep -q -e "$IDP_SECRET" -e "$SERVE_TOKEN" "$tmp/server.log"; then fail "a secret in floe serve's log"; fi

# ---------------------------------------------------------------------------------------
# 2. a bearer token and an extra header
# ---------------------------------------------------------------------------------------
write_conf "token = $SERVE_TOKEN
header.X-Floe-Node = node-a"
start_server --config "$tmp/serve.conf"
post "$tmp/events2.ndjson"
flush_wait
# /healthz: the REST server is probed (catalog) beside the state database (state_db), by
# the prober, not by each /healthz
health() { # health 'PYTHON CONDITION on h': /healthz holds it within 60 s
  for _ in $(seq 300); do
    curl -s "http://127.0.0.1:$port/healthz" > "$tmp/health.json" || true
    python3 -c "import json,sys; h=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
      "$tmp/health.json" 2>/dev/null && return 0
    sleep 0.2
  done
  fail "/healthz never had $1: $(cat "$tmp/health.json")"
}
health 'h["status"] == "ok" and h["checks"]["catalog"]["ok"] and h["checks"]["state_db"]["ok"] and h["checks"]["state_db"].get("enabled", True)'
before=$(grep -c 'GET /v1/config' "$tmp/catalog.log")
for _ in $(seq 50); do curl -s "http://127.0.0.1:$port/healthz" >/dev/null; done
after=$(grep -c 'GET /v1/config' "$tmp/catalog.log")
[ $((after - before)) -le 2 ] || fail "50 /healthz asked the REST catalog $((after - before)) times"
# a REST server that hangs: catalog fails (degraded; posts still taken), then recovers
kill -STOP "$cpid"
health 'h["status"] == "degraded" and not h["checks"]["catalog"]["ok"] and "the REST catalog does not answer" in h["checks"]["catalog"]["error"] and h["checks"]["state_db"]["ok"]'
up=$(curl -s "http://127.0.0.1:$port/metrics" | awk '$1 == "floe_up{subsystem=\"catalog\"}" {print $2}')
[ "$up" = 0 ] || fail "floe_up{subsystem=\"catalog\"} is $up while the REST catalog hangs"
kill -CONT "$cpid"
health 'h["status"] == "ok" and h["checks"]["catalog"]["ok"]'
stop_server
[ "$(rows)" = 1000 ] || fail "after the token run: $(rows) rows, expected 1000"
if grep -q -e "$SERVE_TOKEN" "$tmp/server.log"; then fail "the token in floe serve's log"; fi
# the catalog given by --catalog: [catalog] holds at start and on a reload (SIGHUP)
sed -i '/^catalog = /d' "$tmp/serve.conf"
start_server --config "$tmp/serve.conf" --catalog "$base"
kill -HUP "$pid"
wait_for 60 'grep -q "configuration reloaded\|reload failed" "$tmp/server.log"' || true
grep -q "floe serve: configuration reloaded" "$tmp/server.log" || fail "SIGHUP with --catalog: $(grep reload "$tmp/server.log")"
stop_server

# ---------------------------------------------------------------------------------------
# 3. floe maintain with the settings in floe.conf
# ---------------------------------------------------------------------------------------
cat > "$tmp/floe.conf" <<EOF
[catalog.lake]
uri = $base
warehouse = $tmp/wh
credential = floe-serve:$IDP_SECRET
oauth2-server-uri = $idpbase/token
state-db = $tmp/state.db
EOF
printf '[defaults]\nexpire.older-than = 0s\nexpire.retain-last = 1\nrewrite-manifests.min-manifests = 1\n' > "$tmp/maint.conf"
FLOE_CONFIG="$tmp/floe.conf" "$FLOE" maintain shop.events --once --schedule "$tmp/maint.conf" --json \
  >"$tmp/maint.json" 2>"$tmp/maint.err" || fail "maintain: $(cat "$tmp/maint.err")"
grep -q '"job":"expire".*"result":"ok"' "$tmp/maint.json" || fail "maintain: no expiry: $(cat "$tmp/maint.json")"
if grep -q '"result":"failed"' "$tmp/maint.json"; then fail "maintain: a job failed: $(cat "$tmp/maint.json")"; fi
[ "$(rows)" = 1000 ] || fail "after maintain: $(rows) rows"

# ---------------------------------------------------------------------------------------
# 4. refusals stop the start, with the reason and without the secrets
# ---------------------------------------------------------------------------------------
refused() { # refused WHAT PATTERN: floe serve must exit non-zero at start, saying PATTERN
  : > "$tmp/start.err"
  if timeout 60 "$FLOE" serve --config "$tmp/serve.conf" --port-file "$tmp/port.bad" 2>"$tmp/start.err"; then
    fail "$1: floe serve started"
  fi
  grep -q "$2" "$tmp/start.err" || fail "$1: $(cat "$tmp/start.err")"
  if grep -q -e "$IDP_SECRET" -e "$SERVE_TOKEN" -e wrong-secret-1234 -e wrong-token-5678 "$tmp/start.err"; then
    fail "$1: a secret in the message: $(cat "$tmp/start.err")"
  fi
}
write_conf "credential = floe-serve:wrong-secret-1234
oauth2-server-uri = $idpbase/token"
refused "a wrong client secret" "token request to $idpbase/token: HTTP 401 invalid_client"
write_conf "token = wrong-token-5678"
refused "a wrong token" "GET /v1/config: HTTP 401 NotAuthorizedException"
write_conf ""
refused "no credential" "GET /v1/config: HTTP 401"
write_conf "tokn = $SERVE_TOKEN"
refused "an unknown [catalog] key" "unknown key 'tokn'"
write_conf "token = $SERVE_TOKEN"
sed -i "s|^catalog = .*|catalog = $tmp/other.db|" "$tmp/serve.conf"
refused "[catalog] with a SQL catalog" "\[catalog\] settings are a REST catalog's"
echo "rest_serve_auth: ok"
