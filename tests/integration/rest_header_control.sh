#!/usr/bin/env bash
# rest_header_control.sh - nothing with a control character goes into a REST catalog
# request's headers (adversary finding F6 on issue 21): the identity provider's
# access_token, `token` (floe.conf, .pyiceberg.yaml), FLOE_CATALOG_TOKEN and header.*
# values were pasted into header lines as they were, so a CR/LF in one (a bad answer of
# the identity provider, a stray byte in a file) injected request headers (X-Evil: 1
# reached the catalog). Against a stand-in identity provider + catalog that logs every
# request's headers:
#  - an access_token "a\r\nX-Evil: 1": exit 1, "token request to URI: the access_token
#    holds control characters", no request reaches the catalog;
#  - FLOE_CATALOG_TOKEN, floe.conf token, .pyiceberg.yaml token, floe.conf header.* with
#    a CR (or another control byte) in the value, and a header name with a space: exit 1
#    naming the setting (and the file), nothing sent;
#  - a clean token and header still reach the catalog (control).
set -euo pipefail
name=rest_header_control
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "$name: python3 missing, skipped"; exit 77; }
tmp=$(mktemp -d)
mock=
trap '[ -n "$mock" ] && kill "$mock" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_CATALOG_URI FLOE_WAREHOUSE \
  FLOE_CATALOG_TOKEN FLOE_CATALOG_CREDENTIAL || true
export HOME=$tmp/home
mkdir -p "$HOME"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98

# the stand-in: /v1/oauth/tokens answers an access_token with CR/LF; every other request
# is logged (its headers, one JSON line) and answered as an empty catalog
cat > "$tmp/standin.py" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from json_http import JsonHandler, serve
log = open(sys.argv[2], "a")
class H(JsonHandler):
    def handle_any(self):
        self.body()
        if self.path.endswith("/oauth/tokens"):
            return self.answer(200, {"access_token": "a\r\nX-Evil: 1", "token_type": "bearer",
                                     "expires_in": 60})
        log.write(json.dumps({"path": self.path, "headers": self.headers.items()}) + "\n")
        log.flush()
        if self.path.startswith("/v1/config"):
            return self.answer(200, {"defaults": {}, "overrides": {}})
        return self.answer(200, {"namespaces": []})
    do_GET = do_POST = handle_any
serve(H, sys.argv[1])
PY
python3 "$tmp/standin.py" "$tmp/port" "$tmp/requests.log" "$src/tests/integration/lib" &
mock=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "$name: FAIL: the stand-in did not start" >&2; exit 1; }
uri=http://127.0.0.1:$(cat "$tmp/port")
: > "$tmp/requests.log"

bad=0
miss() { echo "$name: FAIL: $*" >&2; bad=$((bad + 1)); }
# refused WHAT PATTERN CMD...: CMD exits 1 with PATTERN in its error, and the catalog got
# no request
refused() {
  local what=$1 pat=$2 rc=0
  shift 2
  : > "$tmp/requests.log"
  "$@" namespace list >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [ "$rc" != 1 ]; then
    miss "$what: exit $rc, expected 1: $(head -c 300 "$tmp/err")"
  elif ! grep -q -- "$pat" "$tmp/err"; then
    miss "$what: unclear error: $(head -c 300 "$tmp/err")"
  fi
  if [ -s "$tmp/requests.log" ]; then
    miss "$what: $(wc -l < "$tmp/requests.log") request(s) reached the catalog: $(head -c 300 "$tmp/requests.log")"
  fi
}
conf() { printf '[catalog.c]\nuri = %s\n%s\n' "$uri" "$1" > "$tmp/floe.conf"; }

refused "access_token with CR/LF" \
  "REST catalog: token request to $uri/v1/oauth/tokens: the access_token holds control characters" \
  env FLOE_CATALOG_URI="$uri" FLOE_CATALOG_CREDENTIAL=id:secret "$floe"
refused "FLOE_CATALOG_TOKEN with CR/LF" "FLOE_CATALOG_TOKEN: the value holds a control character (0x0d at byte 1)" \
  env FLOE_CATALOG_URI="$uri" FLOE_CATALOG_TOKEN=$'a\r\nX-Evil: 1' "$floe"
conf $'token = a\rX-Evil: 1'
refused "floe.conf token with CR" "$tmp/floe.conf: token: the value holds a control character (0x0d at byte 1)" \
  env FLOE_CONFIG="$tmp/floe.conf" "$floe"
conf $'token = ab\x01c'
refused "floe.conf token with 0x01" "$tmp/floe.conf: token: the value holds a control character (0x01 at byte 2)" \
  env FLOE_CONFIG="$tmp/floe.conf" "$floe"
conf $'token = good\nheader.X-Tenant = blue\rX-Evil: 1'
refused "floe.conf header.X-Tenant with CR" "$tmp/floe.conf: header.X-Tenant: the value holds a control character (0x0d at byte 4)" \
  env FLOE_CONFIG="$tmp/floe.conf" "$floe"
conf $'header.X Evil = 1'
refused "floe.conf header name with a space" "$tmp/floe.conf: header.X Evil: not a header name" \
  env FLOE_CONFIG="$tmp/floe.conf" "$floe"
mkdir -p "$tmp/py"
printf 'catalog:\n  default:\n    uri: %s\n    token: "a\rX-Evil: 1"\n' "$uri" > "$tmp/py/.pyiceberg.yaml"
refused ".pyiceberg.yaml token with CR" "token: the value holds a control character (0x0d at byte 1)" \
  env PYICEBERG_HOME="$tmp/py" "$floe"

# control: a clean token and header reach the catalog
: > "$tmp/requests.log"
conf $'token = good-token\nheader.X-Tenant = blue'
FLOE_CONFIG="$tmp/floe.conf" "$floe" namespace list >/dev/null 2>"$tmp/err" || miss "a clean token: $(cat "$tmp/err")"
python3 - "$tmp/requests.log" <<'PY' || miss "a clean token: $(head -c 300 "$tmp/requests.log")"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert reqs, "no request"
for r in reqs:
    h = dict(r["headers"])
    assert h.get("Authorization") == "Bearer good-token" and h.get("X-Tenant") == "blue", h
PY
kill -0 "$mock" || { echo "$name: FAIL: the stand-in died" >&2; exit 1; }
[ "$bad" = 0 ] || { echo "$name: FAIL: $bad checks failed" >&2; exit 1; }
echo "$name: ok"
