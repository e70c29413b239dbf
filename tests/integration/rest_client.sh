#!/usr/bin/env bash
# rest_client.sh - floe as a client of a REST catalog (type rest): floe's CLI against
# `floe catalog serve` over a SQLite catalog, and against a small stand-in server for
# what floe's server does not offer (OAuth2 tokens, a reduced endpoint list).
#
#  1. configuration: FLOE_CATALOG_URI=http://..., .pyiceberg.yaml with type: rest,
#     uri, warehouse, token, header.*;
#  2. namespaces: multi-level create (the %1F separator), list with a parent,
#     properties, a drop of a non-empty one refused;
#  3. tables: create, append, scan, rewrite, rewrite-manifests, expire, orphans, health,
#     properties, rename, drop --purge, all through REST; what the server's SQL catalog
#     holds afterwards agrees (rows, snapshots) with what the client saw; the create is
#     the server's (POST .../tables, never .../register) and drop --purge leaves the
#     deletion to it (purgeRequested=true);
#  4. 8 processes appending through the server at once lose no commit (409 -> refresh
#     and apply again): 8 snapshots and 8 x the rows; a server with --tokens read with the
#     client's bearer token, a wrong token refused (401); a staged create through a
#     second `floe catalog serve` standing in front of the first (its catalog is REST):
#     the first server gets a staged create and the assert-create commit that adds the
#     snapshot, and the table holds the rows;
#  5. a stand-in server: OAuth2 client credentials (the token is asked for with the
#     credential and scope, then sent as a bearer token; the header.* header sent on
#     every request; a token of 1 s asked for again before it expires, not after a 401),
#     a namespace list in two pages (pageToken / next-page-token), and an operation
#     missing from its `endpoints` refused before any request is sent.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "rest_client: python3 missing, skipped"; exit 77; }

tmp=$(mktemp -d)
pid=
mock=
cleanup() {
  for p in $pid $mock; do
    kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "rest_client: FAIL: $*" >&2
  [ -f "$tmp/server.log" ] && tail -20 "$tmp/server.log" | sed 's/^/  server: /' >&2
  exit 1
}
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME || true
export HOME=$tmp/home
mkdir -p "$HOME"

# the server, over a SQLite catalog
FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_LOG=debug \
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the server did not start"
base=http://127.0.0.1:$(cat "$tmp/port")
sql() { FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$floe" "$@"; }

# ---------------------------------------------------------------------------------------
# 1. configuration
# ---------------------------------------------------------------------------------------
export FLOE_CATALOG_URI=$base FLOE_WAREHOUSE=$tmp/wh
"$floe" catalog show | grep -q "type: *rest" || fail "FLOE_CATALOG_URI=http:// is not type rest"
(
  unset FLOE_CATALOG_URI FLOE_WAREHOUSE
  cat > "$HOME/.pyiceberg.yaml" <<EOF
catalog:
  lake:
    type: rest
    uri: $base
    warehouse: $tmp/wh
    token: not-checked-by-floe-serve
    header.X-Floe-Test: yes
EOF
  "$floe" catalog show | grep -q "type: *rest" || fail ".pyiceberg.yaml type: rest"
  "$floe" namespace create cfgcheck || fail "namespace create through .pyiceberg.yaml"
)
rm -f "$HOME/.pyiceberg.yaml"

# ---------------------------------------------------------------------------------------
# 2. namespaces
# ---------------------------------------------------------------------------------------
"$floe" namespace create shop
"$floe" namespace create shop.eu region=eu
[ "$("$floe" namespace list shop)" = shop.eu ] || fail "list shop: $("$floe" namespace list shop)"
"$floe" namespace list | grep -qx shop || fail "top-level list"
"$floe" namespace properties shop.eu | grep -q "region" || fail "namespace properties"
[ "$(sql namespace list shop)" = shop.eu ] || fail "the server's catalog lacks shop.eu"

# ---------------------------------------------------------------------------------------
# 3. tables through REST
# ---------------------------------------------------------------------------------------
"$floe" gen --count 500 --seed 1 -o "$tmp/a.ndjson" >/dev/null
"$floe" gen --count 700 --seed 2 -o "$tmp/b.ndjson" >/dev/null
"$floe" gen --schema-out "$tmp/schema.json" >/dev/null
"$floe" table create shop.eu.events --schema "$tmp/schema.json" --partition event_type >/dev/null
# made by the server: a create request, no metadata file written and registered by floe
grep -q 'POST /v1/[a-z/]*namespaces/shop%1Feu/tables -> 200' "$tmp/server.log" || fail "no POST .../tables for the create"
if grep -q '/register ->' "$tmp/server.log"; then fail "the create registered a metadata file"; fi
"$floe" append shop.eu.events "$tmp/a.ndjson" >/dev/null
"$floe" append shop.eu.events "$tmp/b.ndjson" >/dev/null
rows() { "$1" scan "$2" --columns event_id | wc -l; }
[ "$(rows "$floe" shop.eu.events)" = 1200 ] || fail "scan: $(rows "$floe" shop.eu.events) rows"
if "$floe" namespace drop shop.eu 2>"$tmp/err"; then fail "dropped a namespace holding a table"; fi
"$floe" rewrite shop.eu.events >/dev/null || fail "rewrite"
"$floe" rewrite-manifests shop.eu.events >/dev/null || fail "rewrite-manifests"
"$floe" table properties shop.eu.events set comment=rest >/dev/null || fail "properties set"
"$floe" expire shop.eu.events --older-than 0s --retain-last 1 >/dev/null || fail "expire"
"$floe" orphans shop.eu.events --older-than 0s --force >/dev/null || fail "orphans"
"$floe" health shop.eu.events --json >/dev/null || fail "health"
[ "$(rows "$floe" shop.eu.events)" = 1200 ] || fail "rows after maintenance"
# the server's catalog holds what the client committed
[ "$(rows sql shop.eu.events)" = 1200 ] || fail "the SQL catalog sees $(rows sql shop.eu.events) rows"
sql table properties shop.eu.events | grep -q "comment = rest" || fail "property not in the SQL catalog"
[ "$("$floe" snapshots shop.eu.events | grep -c '^[0-9]')" = 1 ] || fail "expire kept more than one snapshot"
"$floe" table rename shop.eu.events shop.events2 >/dev/null
[ "$("$floe" table list shop)" = shop.events2 ] || fail "rename: $("$floe" table list shop)"
"$floe" table drop shop.events2 --purge --json >"$tmp/drop.json"
grep -q '"purged_by":"catalog"' "$tmp/drop.json" || fail "drop --purge: $(cat "$tmp/drop.json")"
grep -q 'dropped shop.events2, [1-9][0-9]* files purged' "$tmp/server.log" || fail "the server did not purge"
[ -z "$("$floe" table list shop)" ] || fail "drop"
[ -z "$(find "$tmp/wh/shop" -type f 2>/dev/null)" ] || fail "purge left files: $(find "$tmp/wh/shop" -type f | head -3)"

# ---------------------------------------------------------------------------------------
# 4. 8 concurrent appends through the server
# ---------------------------------------------------------------------------------------
# 8 writers racing with no commit priority (a REST catalog has no shared lease store):
# enough retries that each gets through
"$floe" table create shop.busy --schema "$tmp/schema.json" \
  --property commit.retry.num-retries=40 --property commit.retry.max-wait-ms=2000 >/dev/null
for i in 1 2 3 4 5 6 7 8; do
  "$floe" gen --count 300 --seed $((10 + i)) -o "$tmp/c$i.ndjson" >/dev/null
done
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$floe" append shop.busy "$tmp/c$i.ndjson" >"$tmp/append$i.log" 2>&1 &
  pids+=($!)
done
for i in 0 1 2 3 4 5 6 7; do
  wait "${pids[$i]}" || fail "append $((i + 1)): $(cat "$tmp/append$((i + 1)).log")"
done
[ "$(rows "$floe" shop.busy)" = 2400 ] || fail "8 appends: $(rows "$floe" shop.busy) rows, expected 2400"
[ "$("$floe" snapshots shop.busy | grep -c append)" = 8 ] || fail "8 appends: snapshots
$("$floe" snapshots shop.busy)"
[ "$(rows sql shop.busy)" = 2400 ] || fail "8 appends: the SQL catalog sees $(rows sql shop.busy) rows"

# a staged create: a second server whose catalog is the first (REST) gets a client's
# staged create and its assert-create commit carrying a snapshot of shop.busy; a create
# request cannot say a snapshot, so the second server's floe client stages the create on
# the first server and commits it there with assert-create
FLOE_CATALOG_URI=$base FLOE_WAREHOUSE="$tmp/wh" "$floe" catalog serve --listen 127.0.0.1:0 \
  --port-file "$tmp/port3" 2>"$tmp/server3.log" &
mock=$!
for _ in $(seq 100); do [ -s "$tmp/port3" ] && break; sleep 0.1; done
[ -s "$tmp/port3" ] || fail "the server in front did not start: $(cat "$tmp/server3.log")"
before=$(wc -l <"$tmp/server.log")
cat > "$tmp/staged.py" <<'EOF'
import json, sys, urllib.request
a, b = sys.argv[1], sys.argv[2]
def req(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(base + path, data=data, method=method,
                               headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r) as f:
            return f.status, json.loads(f.read() or b"null")
    except urllib.error.HTTPError as e:
        sys.exit("%s %s: %d %s" % (method, path, e.code, e.read().decode()))
_, src = req(a, "GET", "/v1/namespaces/shop/tables/busy")
m = src["metadata"]
pick = lambda arr, key, cur: next(x for x in m[arr] if x[key] == m[cur])
schema = pick("schemas", "schema-id", "current-schema-id")
spec = pick("partition-specs", "spec-id", "default-spec-id")
order = pick("sort-orders", "order-id", "default-sort-order-id")
snap = dict(pick("snapshots", "snapshot-id", "current-snapshot-id"))
snap.pop("parent-snapshot-id", None)
_, staged = req(b, "POST", "/v1/namespaces/shop/tables",
                {"name": "copy", "schema": schema, "stage-create": True})
assert "metadata-location" not in staged, staged
sm = staged["metadata"]
# a table's manifest list lies in its own location (the server refuses another table's):
# the copy names one there, a copy of busy's list (whose manifests still name busy's
# files) written once the table exists (its location must be empty when it is created)
import os, shutil
local = lambda u: u[len("file://"):] if u.startswith("file://") else u
busy_list = snap["manifest-list"]
snap["manifest-list"] = sm["location"] + "/metadata/" + os.path.basename(busy_list)
updates = [{"action": "assign-uuid", "uuid": sm["table-uuid"]},
           {"action": "upgrade-format-version", "format-version": 2},
           {"action": "add-schema", "schema": schema, "last-column-id": m["last-column-id"]},
           {"action": "set-current-schema", "schema-id": -1},
           {"action": "add-spec", "spec": spec}, {"action": "set-default-spec", "spec-id": -1},
           {"action": "add-sort-order", "sort-order": order},
           {"action": "set-default-sort-order", "sort-order-id": -1},
           {"action": "set-location", "location": sm["location"]},
           {"action": "add-snapshot", "snapshot": snap},
           {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
            "snapshot-id": snap["snapshot-id"]}]
_, done = req(b, "POST", "/v1/namespaces/shop/tables/copy",
              {"requirements": [{"type": "assert-create"}], "updates": updates})
os.makedirs(os.path.dirname(local(snap["manifest-list"])), exist_ok=True)
shutil.copyfile(local(busy_list), local(snap["manifest-list"]))
print(done["metadata"]["current-snapshot-id"])
EOF
snap=$(python3 "$tmp/staged.py" "$base" "http://127.0.0.1:$(cat "$tmp/port3")") ||
  fail "staged create through the server in front: $(tail -5 "$tmp/server3.log")"
tail -n +"$((before + 1))" "$tmp/server.log" | grep -- '-> ' >"$tmp/seen.log" || true
grep -q 'POST /v1/[a-z/]*namespaces/shop/tables -> 200' "$tmp/seen.log" || fail "no staged create: $(cat "$tmp/seen.log")"
grep -q 'POST /v1/[a-z/]*namespaces/shop/tables/copy -> 200' "$tmp/seen.log" || fail "no create commit: $(cat "$tmp/seen.log")"
[ "$(rows sql shop.copy)" = 2400 ] || fail "staged create: $(rows sql shop.copy) rows in shop.copy"
sql snapshots shop.copy | grep -q "^$snap" || fail "staged create: snapshot $snap missing"
kill "$mock" && wait "$mock" || true
mock=

# a server that checks bearer tokens (--tokens): the client's token opens what its grants
# cover; a wrong one is refused
cat > "$tmp/tokens.conf" <<'EOF'
[token reader]
secret = reader-secret-123
grants = shop.*
EOF
chmod 600 "$tmp/tokens.conf"  # it holds secrets: catalog serve refuses one others may read
FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$floe" catalog serve \
  --listen 127.0.0.1:0 --port-file "$tmp/port2" --tokens "$tmp/tokens.conf" 2>>"$tmp/server.log" &
mock=$!
for _ in $(seq 100); do [ -s "$tmp/port2" ] && break; sleep 0.1; done
[ -s "$tmp/port2" ] || fail "the server with tokens did not start"
tbase=http://127.0.0.1:$(cat "$tmp/port2")
[ "$(FLOE_CATALOG_URI=$tbase FLOE_CATALOG_TOKEN=reader-secret-123 rows "$floe" shop.busy)" = 2400 ] ||
  fail "scan with a bearer token"
if FLOE_CATALOG_URI=$tbase FLOE_CATALOG_TOKEN=wrong-secret-123 "$floe" table list shop 2>"$tmp/err"; then
  fail "listed with a wrong token"
fi
grep -q "HTTP 401" "$tmp/err" || fail "wrong token: $(cat "$tmp/err")"
kill "$mock" && wait "$mock" || true
mock=

# ---------------------------------------------------------------------------------------
# 5. a stand-in server: OAuth2 client credentials, endpoints
# ---------------------------------------------------------------------------------------
cat > "$tmp/mock.py" <<'EOF'
import json, sys, time, urllib.parse
sys.path.insert(0, sys.argv[3])
from json_http import JsonHandler, serve
log = open(sys.argv[2], "a")
class H(JsonHandler):
    tokens = 0
    def do_POST(self):
        form = urllib.parse.parse_qs(self.body().decode())
        log.write("POST %s %s\n" % (self.path, json.dumps(form, sort_keys=True))); log.flush()
        if self.path == "/v1/oauth/tokens" and form.get("client_id") == ["me"] and \
           form.get("client_secret") == ["s3cret"] and form.get("grant_type") == ["client_credentials"]:
            # tokens tok-1, tok-2, ...: each good for 1 s, so a client must refresh it
            H.tokens += 1
            return self.answer(200, {"access_token": "tok-%d" % H.tokens, "token_type": "bearer",
                                     "expires_in": 1})
        self.answer(401, {"error": "invalid_client"})
    def do_GET(self):
        log.write("GET %s %s %s\n" % (self.path, self.headers.get("Authorization"),
                                      self.headers.get("X-Floe-Test"))); log.flush()
        if self.headers.get("Authorization") != "Bearer tok-%d" % H.tokens:
            return self.answer(401, {"error": {"message": "no token", "type": "NotAuthorizedException", "code": 401}})
        if self.path.startswith("/v1/config"):
            return self.answer(200, {"defaults": {}, "overrides": {"prefix": "p1"},
                                     "endpoints": ["GET /v1/{prefix}/namespaces"]})
        if self.path.startswith("/v1/p1/namespaces"):
            # two pages; the first answered after the token's lifetime
            if "pageToken=pg2" in self.path:
                return self.answer(200, {"namespaces": [["b"]], "next-page-token": None})
            time.sleep(1.2)
            return self.answer(200, {"namespaces": [["a"]], "next-page-token": "pg2"})
        self.answer(404, {"error": {"message": "no", "type": "NotFound", "code": 404}})
serve(H, sys.argv[1])
EOF
python3 "$tmp/mock.py" "$tmp/mock.port" "$tmp/mock.log" "$(cd "$(dirname "$0")" && pwd)/lib" &
mock=$!
for _ in $(seq 50); do [ -s "$tmp/mock.port" ] && break; sleep 0.1; done
[ -s "$tmp/mock.port" ] || fail "the stand-in server did not start"
mbase=http://127.0.0.1:$(cat "$tmp/mock.port")
cat > "$tmp/floe.conf" <<EOF
[catalog.m]
type = rest
uri = $mbase
credential = me:s3cret
scope = catalog
header.X-Floe-Test = yes
EOF
mrun() { env -u FLOE_CATALOG_URI -u FLOE_WAREHOUSE FLOE_CONFIG="$tmp/floe.conf" "$floe" "$@"; }
[ "$(mrun namespace list | tr '\n' ' ')" = "a b " ] || fail "OAuth2: namespace list: $(mrun namespace list 2>&1)"
grep -q '^POST /v1/oauth/tokens .*"scope": \["catalog"\]' "$tmp/mock.log" || fail "no token request: $(cat "$tmp/mock.log")"
grep -q '^GET /v1/p1/namespaces Bearer tok-1 yes' "$tmp/mock.log" || fail "prefix, token or header.* not used: $(cat "$tmp/mock.log")"
# the list came in two pages (pageToken), and the token, expired while the first page
# was on its way, was asked for again before the second
grep -q '^GET /v1/p1/namespaces?pageToken=pg2 Bearer tok-2 yes' "$tmp/mock.log" ||
  fail "second page or refreshed token: $(cat "$tmp/mock.log")"
[ "$(grep -c '^POST /v1/oauth/tokens' "$tmp/mock.log")" = 2 ] || fail "token requests: $(cat "$tmp/mock.log")"
grep -q '^GET /v1/p1/namespaces?pageToken=pg2 Bearer tok-1' "$tmp/mock.log" &&
  fail "a request went out with the expired token: $(cat "$tmp/mock.log")"
: > "$tmp/mock.log"
if mrun namespace create c 2>"$tmp/err"; then fail "created a namespace the server does not offer"; fi
grep -q "does not offer POST /v1/{prefix}/namespaces" "$tmp/err" || fail "endpoint refusal: $(cat "$tmp/err")"
if grep -q "^POST /v1/p1" "$tmp/mock.log"; then fail "the refused operation was sent"; fi
# a wrong secret: the token request fails, nothing else is sent
sed -i 's/me:s3cret/me:wrong/' "$tmp/floe.conf"
if mrun namespace list 2>"$tmp/err"; then fail "listed with a wrong secret"; fi
grep -q "token request" "$tmp/err" || fail "wrong secret: $(cat "$tmp/err")"

echo "rest_client: ok"
