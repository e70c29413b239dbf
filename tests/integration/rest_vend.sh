#!/usr/bin/env bash
# rest_vend.sh - credentials through a REST catalog, both sides:
#
#  1. credential vending: `floe catalog serve --vend FILE` over a SQLite catalog whose
#     warehouse is on the signature-checking S3 server (tests/lib/s3sig.sh) hands the
#     server's keys to clients per table prefix; a floe client with no S3 keys of its own
#     (no AWS_* settings, no ~/.aws) appends and scans through it, every S3 request it
#     made correctly signed with the vended keys; the same client against a server that
#     vends nothing fails for want of keys; the credentials route answers the keys; keys
#     vended with a short expiry are asked for again (the credentials route) and still
#     work; s3.path-style-access vended is honoured over the client's own addressing;
#  2. a server vending a wrong secret: the client's S3 requests are refused, and the
#     error names the object, the 403 and the vended keys;
#  3. SigV4-signed catalog requests (rest.sigv4-enabled) against a stand-in server that
#     checks every signature (AWS SigV4, recomputed from what came over the wire), with
#     the S3 keys of the client's environment and a session token; the signing region
#     and name are those configured (default name execute-api); a wrong secret is
#     refused with the server's 403.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "rest_vend: python3 missing, SKIPPED"; exit 77; }
command -v node >/dev/null || { echo "rest_vend: node missing, SKIPPED"; exit 77; }

tmp=$(mktemp -d)
pids=()
PREV_TRAP=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; eval "$PREV_TRAP"' EXIT
fail() {
  echo "rest_vend: FAIL: $*" >&2
  for f in "$tmp"/server*.log; do [ -f "$f" ] && tail -5 "$f" | sed "s|^|  $(basename "$f"): |" >&2; done
  exit 1
}
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_CATALOG_TOKEN || true
export HOME=$tmp/home
mkdir -p "$HOME"

source "$src/tests/lib/s3sig.sh"
s3sig_start "$tmp" || fail "could not start the S3 server"
s3=http://127.0.0.1:$S3SIG_PORT

# the server's catalog, with the server's keys (those of s3sig.sh's environment)
sql() { FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE=s3://wh/lake "$floe" "$@"; }
"$floe" gen --schema-out "$tmp/schema.json" >/dev/null
"$floe" gen --count 400 --seed 1 -o "$tmp/a.ndjson" >/dev/null
"$floe" gen --count 600 --seed 2 -o "$tmp/b.ndjson" >/dev/null
sql namespace create shop >/dev/null
sql table create shop.events --schema "$tmp/schema.json" --partition event_type >/dev/null
sql append shop.events "$tmp/a.ndjson" >/dev/null

# serve N VENDFILE: a catalog server (vending with VENDFILE unless it is "-"); its base
# URL in $base
serve() {
  local n=$1 vend=$2 args=()
  [ "$vend" = - ] || args=(--vend "$vend")
  FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE=s3://wh/lake \
    "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port$n" "${args[@]}" \
    2>"$tmp/server$n.log" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$tmp/port$n" ] && break; sleep 0.1; done
  [ -s "$tmp/port$n" ] || fail "server $n did not start: $(cat "$tmp/server$n.log")"
  base=http://127.0.0.1:$(cat "$tmp/port$n")
}
# client: floe with no S3 keys or endpoint of its own
client() {
  env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_ENDPOINT_URL_S3 \
    -u AWS_ENDPOINT_URL -u AWS_PROFILE FLOE_CATALOG_URI="$cbase" FLOE_WAREHOUSE=s3://wh/lake \
    "$floe" "$@"
}
rows() { client scan "$1" --columns event_id | wc -l; }

# ---------------------------------------------------------------------------------------
# 1. vending
# ---------------------------------------------------------------------------------------
cat > "$tmp/vend.conf" <<EOF
# keys for the tables under s3://wh/lake/
[vend lake]
prefix = s3://wh/lake/
s3.access-key-id = AKIDFLOETEST
s3.secret-access-key = floe-test-secret
s3.endpoint = $s3
s3.region = us-east-1
[vend other]
prefix = s3://wh/elsewhere/
s3.access-key-id = AKIDOTHER
s3.secret-access-key = not-this-one
EOF
serve 1 "$tmp/vend.conf"; cbase=$base
before=$(s3sig_failures)
[ "$(rows shop.events)" = 400 ] || fail "scan through vended keys: $(rows shop.events 2>&1 | tail -2)"
client append shop.events "$tmp/b.ndjson" >/dev/null 2>"$tmp/err" || fail "append through vended keys: $(cat "$tmp/err")"
[ "$(rows shop.events)" = 1000 ] || fail "scan after the append: $(rows shop.events)"
[ "$(sql scan shop.events --columns event_id | wc -l)" = 1000 ] || fail "the server's catalog does not see the append"
[ "$(s3sig_failures)" = "$before" ] || fail "$(( $(s3sig_failures) - before )) S3 requests badly signed"
# the credentials route; and a load without the delegation header gets no keys
curl -sf "$base/v1/namespaces/shop/tables/events/credentials" > "$tmp/creds.json" || fail "credentials route"
grep -q '"prefix":"s3://wh/lake/"' "$tmp/creds.json" && grep -q '"s3.access-key-id":"AKIDFLOETEST"' "$tmp/creds.json" ||
  fail "credentials route: $(cat "$tmp/creds.json")"
load=$(curl -sf "$base/v1/namespaces/shop/tables/events") || fail "load without the delegation header"
grep -q AKIDFLOETEST <<< "$load" && fail "keys vended without being asked for"
load=$(curl -sf -H 'X-Iceberg-Access-Delegation: vended-credentials' "$base/v1/namespaces/shop/tables/events") ||
  fail "load with the delegation header"
grep -q '"storage-credentials":\[{"prefix":"s3://wh/lake/"' <<< "$load" ||
  fail "load with the delegation header: no storage-credentials"

# a server that vends nothing: the client has no keys
serve 2 -; cbase=$base
if client scan shop.events --columns event_id >/dev/null 2>"$tmp/err"; then fail "scanned without keys"; fi
grep -q "no AWS credentials" "$tmp/err" || fail "no keys: $(cat "$tmp/err")"

# keys that expire within the refresh margin: asked for again (the credentials route)
sed 's/^s3.region = us-east-1$/s3.region = us-east-1\nexpires-in = 30/' "$tmp/vend.conf" > "$tmp/vend_exp.conf"
FLOE_LOG=info serve 3 "$tmp/vend_exp.conf"; cbase=$base
client append shop.events "$tmp/a.ndjson" >/dev/null 2>"$tmp/err" || fail "append with expiring keys: $(cat "$tmp/err")"
[ "$(rows shop.events)" = 1400 ] || fail "scan with expiring keys: $(rows shop.events)"
grep -q "s3.session-token-expires-at-ms" <(curl -sf "$base/v1/namespaces/shop/tables/events/credentials") ||
  fail "expires-in: no s3.session-token-expires-at-ms"
[ "$(grep -c 'credentials of shop.events: the keys of \[vend lake\]' "$tmp/server3.log")" -ge 3 ] ||
  fail "expiring keys were not asked for again: $(grep -c 'credentials of' "$tmp/server3.log") credentials requests"

# the vended addressing: a client whose own settings address this S3 server virtual-host
# style (its own endpoint, FLOE_S3_ADDRESSING=virtual: wh.127.0.0.1, which does not
# resolve) reads the table when the catalog vends s3.path-style-access = true, and fails
# when it vends nothing about addressing (the client's setting then stands)
vclient() {
  env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
    AWS_ENDPOINT_URL_S3="$s3" FLOE_S3_ADDRESSING=virtual FLOE_S3_RETRY_BUDGET_MS=2000 \
    FLOE_CATALOG_URI="$cbase" FLOE_WAREHOUSE=s3://wh/lake "$floe" "$@"
}
sed 's/^s3.region = us-east-1$/s3.region = us-east-1\ns3.path-style-access = true/' "$tmp/vend.conf" > "$tmp/vend_path.conf"
serve 5 "$tmp/vend_path.conf"; cbase=$base
[ "$(vclient scan shop.events --columns event_id 2>"$tmp/err" | wc -l)" = 1400 ] ||
  fail "s3.path-style-access = true vended, not honoured: $(cat "$tmp/err")"
serve 6 "$tmp/vend.conf"; cbase=$base
if vclient scan shop.events --columns event_id >/dev/null 2>"$tmp/err"; then
  fail "virtual-host addressing reached this S3 server (the test proves nothing)"
fi

# ---------------------------------------------------------------------------------------
# 2. a wrong vended secret
# ---------------------------------------------------------------------------------------
sed 's/^s3.secret-access-key = floe-test-secret$/s3.secret-access-key = wrong-secret/' "$tmp/vend.conf" > "$tmp/vend_bad.conf"
serve 4 "$tmp/vend_bad.conf"; cbase=$base
if client append shop.events "$tmp/b.ndjson" >/dev/null 2>"$tmp/err"; then fail "appended with a wrong vended secret"; fi
grep -q "s3://wh/lake/.*HTTP 403 .*the catalog vended" "$tmp/err" ||
  fail "wrong secret: unclear error: $(cat "$tmp/err")"
[ "$(sql scan shop.events --columns event_id | wc -l)" = 1400 ] || fail "a refused append changed the table"

# ---------------------------------------------------------------------------------------
# 3. SigV4-signed catalog requests
# ---------------------------------------------------------------------------------------
cat > "$tmp/sigv4.py" <<'EOF'
import hashlib, hmac, json, sys, urllib.parse
port_file, log_file, AK, SK, TOKEN, REGION, SERVICE, LIB = sys.argv[1:9]
sys.path.insert(0, LIB)
from json_http import JsonHandler, serve
log = open(log_file, "a")

def hm(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()

def enc(s):
    return urllib.parse.quote(s, safe="-_.~")

class H(JsonHandler):
    def refusal(self, body):
        """Why the request's SigV4 signature is not right, or None."""
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("AWS4-HMAC-SHA256 "):
            return "no SigV4 Authorization header: %r" % auth
        f = dict(p.strip().split("=", 1) for p in auth[17:].split(","))
        scope = f["Credential"].split("/")
        if scope[0] != AK or scope[2:] != [REGION, SERVICE, "aws4_request"]:
            return "credential scope %s" % f["Credential"]
        signed = f["SignedHeaders"].split(";")
        sent = [h.lower() for h in self.headers.keys()]
        for h in sent:
            if h.startswith("x-amz-") and h not in signed:
                return "%s sent but not signed" % h
        if "host" not in signed or "x-amz-date" not in signed:
            return "host or x-amz-date not signed"
        if self.headers.get("x-amz-security-token") != TOKEN:
            return "session token %r" % self.headers.get("x-amz-security-token")
        path, _, query = self.path.partition("?")
        q = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
        canon = "\n".join([
            self.command, path, "&".join("%s=%s" % (enc(k), enc(v)) for k, v in q),
            "".join("%s:%s\n" % (h, " ".join(self.headers.get(h, "").split())) for h in signed),
            ";".join(signed), hashlib.sha256(body).hexdigest()])
        sts = "\n".join(["AWS4-HMAC-SHA256", self.headers["x-amz-date"], "/".join(scope[1:]),
                         hashlib.sha256(canon.encode()).hexdigest()])
        k = hm(("AWS4" + SK).encode(), scope[1])
        for part in (REGION, SERVICE, "aws4_request"):
            k = hm(k, part)
        want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
        return None if hmac.compare_digest(want, f["Signature"]) else "signature mismatch"
    def handle_any(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        why = self.refusal(body)
        log.write("%s %s %s\n" % (self.command, self.path, why or "signed")); log.flush()
        if why:
            return self.answer(403, {"error": {"message": "SigV4: " + why,
                                               "type": "ForbiddenException", "code": 403}})
        if self.path.startswith("/v1/config"):
            return self.answer(200, {"defaults": {}, "overrides": {},
                                     "endpoints": ["GET /v1/{prefix}/namespaces",
                                                   "POST /v1/{prefix}/namespaces"]})
        if self.command == "GET" and self.path.startswith("/v1/namespaces"):
            return self.answer(200, {"namespaces": [["signed"]]})
        if self.command == "POST" and self.path == "/v1/namespaces":
            return self.answer(200, json.loads(body))
        self.answer(404, {"error": {"message": "no", "type": "NotFoundException", "code": 404}})
    do_GET = do_POST = handle_any

serve(H, port_file)
EOF
python3 "$tmp/sigv4.py" "$tmp/sigv4.port" "$tmp/sigv4.log" AKIDSIGV4 sigv4-secret tok-123 eu-west-1 glue \
  "$(cd "$(dirname "$0")" && pwd)/lib" &
pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/sigv4.port" ] && break; sleep 0.1; done
[ -s "$tmp/sigv4.port" ] || fail "the SigV4 stand-in did not start"
cat > "$tmp/sigv4.conf" <<EOF
[catalog.g]
type = rest
uri = http://127.0.0.1:$(cat "$tmp/sigv4.port")
rest.sigv4-enabled = true
rest.signing-region = eu-west-1
rest.signing-name = glue
EOF
sigrun() {
  env -u FLOE_CATALOG_URI -u FLOE_WAREHOUSE FLOE_CONFIG="$tmp/sigv4.conf" AWS_ACCESS_KEY_ID=AKIDSIGV4 \
    AWS_SESSION_TOKEN=tok-123 "$floe" "$@"
}
[ "$(AWS_SECRET_ACCESS_KEY=sigv4-secret sigrun namespace list 2>"$tmp/err")" = signed ] ||
  fail "SigV4: namespace list: $(cat "$tmp/err"; cat "$tmp/sigv4.log")"
AWS_SECRET_ACCESS_KEY=sigv4-secret sigrun namespace create made >/dev/null 2>"$tmp/err" ||
  fail "SigV4: a signed POST: $(cat "$tmp/err"; cat "$tmp/sigv4.log")"
[ "$(grep -c ' signed$' "$tmp/sigv4.log")" -ge 4 ] || fail "SigV4: $(cat "$tmp/sigv4.log")"
grep -qv ' signed$' "$tmp/sigv4.log" && fail "SigV4: a request badly signed: $(cat "$tmp/sigv4.log")"
if AWS_SECRET_ACCESS_KEY=wrong-secret sigrun namespace list >/dev/null 2>"$tmp/err"; then
  fail "SigV4: listed with a wrong secret"
fi
grep -q "HTTP 403 ForbiddenException: SigV4: signature mismatch" "$tmp/err" || fail "SigV4 wrong secret: $(cat "$tmp/err")"
# the default signing name is execute-api: this server wants glue
sed -i '/rest.signing-name/d' "$tmp/sigv4.conf"
if AWS_SECRET_ACCESS_KEY=sigv4-secret sigrun namespace list >/dev/null 2>"$tmp/err"; then
  fail "SigV4: signed for glue without rest.signing-name"
fi
grep -q "credential scope AKIDSIGV4/[0-9]*/eu-west-1/execute-api/aws4_request" "$tmp/err" ||
  fail "SigV4 default signing name: $(cat "$tmp/err")"
# no keys at all: a clear error before anything is sent
if env -u FLOE_CATALOG_URI -u FLOE_WAREHOUSE -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
  FLOE_CONFIG="$tmp/sigv4.conf" "$floe" namespace list >/dev/null 2>"$tmp/err"; then
  fail "SigV4 without keys"
fi
grep -q "rest.sigv4-enabled: .*no AWS credentials" "$tmp/err" || fail "SigV4 without keys: $(cat "$tmp/err")"

echo "rest_vend: ok"
