#!/usr/bin/env bash
# rest_utf8_paths.sh - `floe catalog serve` answers a path whose names are not UTF-8 with
# a 400 and an ErrorModel that is valid JSON (adversary finding on issue 21: `%FF%FE` and
# `%C0%AE` (an overlong '.') were echoed raw into a 404's message, which no JSON parser
# takes), whether the bytes come percent-encoded or raw on the request line; a UTF-8
# name (`%C3%A9t%C3%A9`) is still looked up (404 NoSuchNamespaceException naming it).
name=rest_utf8_paths
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "rest_utf8_paths: SKIP: curl missing"; exit 77; }
fails=0
fail() { echo "rest_utf8_paths: FAIL: $*" >&2; fails=$((fails + 1)); }
"$floe" namespace create shop >/dev/null
start_server

# PATH WANT_STATUS WANT_TYPE: the raw request line's path, sent as bytes (\xHH escapes)
check() {
  python3 - "$port" "$1" "$2" "$3" <<'PY' || fail "$1"
import json, socket, sys
port, path, want, wtype = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
raw = path.encode("latin-1").decode("unicode_escape").encode("latin-1")
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET " + raw + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
status = int(head.split(b" ")[1])
try:
    doc = json.loads(body.decode("utf-8"))
except Exception as e:
    sys.exit("%s: the answer is not UTF-8 JSON (%s): %r" % (path, e, body[:200]))
err = doc.get("error", {})
if status != want or err.get("type") != wtype or err.get("code") != want:
    sys.exit("%s: %d %s, want %d %s" % (path, status, err, want, wtype))
print(err.get("message"))
PY
}
check '/v1/namespaces/%FF%FE' 400 BadRequestException
check '/v1/namespaces/shop/tables/%C0%AE' 400 BadRequestException
check '/v1/namespaces/\xff\xfe' 400 BadRequestException
check '/v1/namespaces/shop/tables/ev\xc3' 400 BadRequestException
check '/v1/nope\xff' 400 BadRequestException
msg=$(check '/v1/namespaces/%C3%A9t%C3%A9' 404 NoSuchNamespaceException)
[ "$msg" = "namespace été does not exist" ] || fail "UTF-8 name: $msg"
[ "$fails" = 0 ] || exit 1
echo "rest_utf8_paths: ok"
