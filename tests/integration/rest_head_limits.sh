#!/usr/bin/env bash
# rest_head_limits.sh - an oversized request to `floe catalog serve` is answered in the
# REST spec's ErrorModel (issue 21): libmicrohttpd answered headers past its connection
# memory (32 KiB) with its own HTML page (431 "Request too big") and an overlong request
# target likewise (414); now floe's handler sees them first (a larger memory pool) and
# answers JSON: headers over 32 KiB 431, a target over 32 KiB 414, a body over the limit
# 413 (past 16 MiB, by Content-Length or chunked). Each answer is an ErrorModel with the status as code;
# a normal request is served afterwards.
name=rest_head_limits
source "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }
"$floe" namespace create shop >/dev/null
start_server

# error_model WANT WHAT: $tmp/body is an ErrorModel with code WANT and $tmp/head says JSON
error_model() {
  python3 - "$1" "$tmp/body" 2>/dev/null <<'PY' || fail "$2: not an ErrorModel with code $1: $(head -c 300 "$tmp/body")"
import json, sys
e = json.load(open(sys.argv[2]))["error"]
assert e["code"] == int(sys.argv[1]) and isinstance(e["message"], str) and isinstance(e["type"], str), e
PY
  grep -qi '^content-type: application/json' "$tmp/head" || fail "$2: not JSON: $(cat "$tmp/head")"
}
call() { curl -s -D "$tmp/head" -o "$tmp/body" -w '%{http_code}' "$@"; }

big=$(head -c 40000 /dev/zero | tr '\0' a)
code=$(call -H "X-Big: $big" "$base/v1/config")
[ "$code" = 431 ] || fail "40 kB header: HTTP $code: $(head -c 200 "$tmp/body")"
error_model 431 "40 kB header"
code=$(call "$base/v1/config?x=$big")
[ "$code" = 414 ] || fail "40 kB request target: HTTP $code: $(head -c 200 "$tmp/body")"
error_model 414 "40 kB request target"
head -c 17000000 /dev/zero | tr '\0' a > "$tmp/big.json"
code=$(call -H 'Content-Type: application/json' --data-binary @"$tmp/big.json" "$base/v1/namespaces")
[ "$code" = 413 ] || fail "17 MB body: HTTP $code"
error_model 413 "17 MB body"
code=$(call -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
  --data-binary @"$tmp/big.json" "$base/v1/namespaces")
[ "$code" = 413 ] || fail "17 MB chunked body: HTTP $code"
error_model 413 "17 MB chunked body"
code=$(call "$base/v1/namespaces/shop")
[ "$code" = 200 ] || fail "a normal request afterwards: HTTP $code"
server_alive
echo "$name: ok"
