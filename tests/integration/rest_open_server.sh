#!/usr/bin/env bash
# rest_open_server.sh - `floe catalog serve` without tokens (open, for local use) cannot be
# driven by a web page in the user's browser (adversary finding on issue 21): a request
# whose Host is not a loopback name (DNS rebinding: evil.example resolved to 127.0.0.1) or
# whose Origin is another site is refused 403, and a POST whose Content-Type is not
# application/json (what a page can send cross-site without a preflight: a form, text) is
# refused 415 - each with an ErrorModel, changing nothing. Loopback names, loopback
# origins and application/json (with parameters) are served; a server with tokens is not
# concerned (a page cannot send its bearer token).
name=rest_open_server
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: SKIP: curl missing"; exit 77; }
fails=0
fail() { echo "$name: FAIL: $*" >&2; fails=$((fails + 1)); }
"$floe" gen --schema-out "$tmp/schema.json" >/dev/null
start_server
base=http://127.0.0.1:$port

# WANT_STATUS WANT_TYPE CURL_ARGS...: the status, and for an error the ErrorModel's type
req() {
  local want=$1 type=$2
  shift 2
  local code
  code=$(curl -s -o "$tmp/body" -w '%{http_code}' "$@")
  if [ "$code" != "$want" ]; then
    fail "$* -> $code, want $want: $(head -c 300 "$tmp/body")"
    return
  fi
  [ "$type" = - ] && return
  python3 - "$tmp/body" "$want" "$type" <<'PY' || fail "$*: $(head -c 300 "$tmp/body")"
import json, sys
e = json.load(open(sys.argv[1]))["error"]
if e.get("code") != int(sys.argv[2]) or e.get("type") != sys.argv[3] or not e.get("message"):
    sys.exit("bad ErrorModel: %r" % e)
PY
}
json=(-H 'Content-Type: application/json')

# loopback names and addresses, any port
req 200 - "$base/v1/config"
req 200 - -H "Host: localhost:$port" "$base/v1/config"
req 200 - -H "Host: LOCALHOST" "$base/v1/config"
req 200 - -H "Host: 127.3.2.1:99" "$base/v1/config"
req 200 - -H "Host: [::1]:$port" "$base/v1/config"
# DNS rebinding: the page's own name
req 403 ForbiddenException -H "Host: evil.example:$port" "$base/v1/config"
req 403 ForbiddenException -H "Host: evil.example" "$base/v1/namespaces"
req 403 ForbiddenException -H "Host: 127.0.0.1.evil.example" "$base/v1/config"
req 403 ForbiddenException -H "Host: localhost.evil.example:$port" "$base/v1/config"
req 403 ForbiddenException -H "Host: 10.0.0.1:$port" "$base/v1/config"
req 403 ForbiddenException -H "Host: 127.0.0.1:x" "$base/v1/config"
req 403 ForbiddenException -H "Host: evil.example" -X POST "${json[@]}" \
  -d '{"namespace":["rebound"]}' "$base/v1/namespaces"
# cross-origin requests
req 200 - -H "Origin: http://localhost:3000" "$base/v1/config"
req 200 - -H "Origin: http://127.0.0.1:$port" "$base/v1/config"
req 403 ForbiddenException -H "Origin: https://evil.example" "$base/v1/config"
req 403 ForbiddenException -H "Origin: null" "$base/v1/config"
req 403 ForbiddenException -H "Origin: https://evil.example" -X POST "${json[@]}" \
  -d '{"namespace":["crossorigin"]}' "$base/v1/namespaces"
# simple requests: a form or text body is not JSON to this server
req 415 UnsupportedMediaTypeException -X POST -d '{"namespace":["form"]}' "$base/v1/namespaces"
req 415 UnsupportedMediaTypeException -X POST -H 'Content-Type: text/plain' \
  -d '{"namespace":["text"]}' "$base/v1/namespaces"
req 415 UnsupportedMediaTypeException -X POST -H 'Content-Type: multipart/form-data; boundary=x' \
  -d '{"namespace":["multi"]}' "$base/v1/namespaces"
req 415 UnsupportedMediaTypeException -X POST -H 'Content-Type:' \
  -d '{"namespace":["none"]}' "$base/v1/namespaces"
req 415 UnsupportedMediaTypeException -X POST -H 'Content-Type: application/jsonx' \
  -d '{"namespace":["jsonx"]}' "$base/v1/namespaces"
# nothing above was created; JSON is served, with or without parameters
"$floe" namespace list > "$tmp/ns" || fail "namespace list"
[ ! -s "$tmp/ns" ] || fail "refused requests created namespaces: $(cat "$tmp/ns")"
req 200 - -X POST "${json[@]}" -d '{"namespace":["ok1"]}' "$base/v1/namespaces"
req 200 - -X POST -H 'Content-Type: Application/JSON; charset=utf-8' \
  -d '{"namespace":["ok2"]}' "$base/v1/namespaces"
[ "$("$floe" namespace list | tr '\n' ' ')" = "ok1 ok2 " ] ||
  fail "namespaces: $("$floe" namespace list | tr '\n' ' ')"
# floe's own client still works against it
FLOE_CATALOG_URI=$base "$floe" namespace create ok3 >/dev/null 2>"$tmp/err" ||
  fail "floe's client: $(cat "$tmp/err")"
FLOE_CATALOG_URI=$base "$floe" table create ok3.t --schema "$tmp/schema.json" >/dev/null 2>"$tmp/err" ||
  fail "floe's client: $(cat "$tmp/err")"
server_alive
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=

# with tokens the bearer token decides (a page cannot send it): any Host is served
printf '[token t]\nsecret = secret-123456\ngrants = *\n' > "$tmp/tokens.ini"
chmod 600 "$tmp/tokens.ini"
rm -f "$tmp/port"
start_server --tokens "$tmp/tokens.ini"
base=http://127.0.0.1:$port
req 200 - -H 'Authorization: Bearer secret-123456' -H "Host: catalog.example" "$base/v1/config"
req 401 NotAuthorizedException -H "Host: catalog.example" "$base/v1/config"
server_alive
[ "$fails" = 0 ] || exit 1
echo "$name: ok"
