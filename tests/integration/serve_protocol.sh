#!/usr/bin/env bash
# floe serve at the HTTP protocol edge (SECURITY.md section 6):
#   1. request framing (RFC 9112 section 6.3): two Content-Length fields that differ, a
#      Content-Length that is not a number, Content-Length together with
#      Transfer-Encoding, two Host fields and a field name with white space before its
#      colon ("Content-Length : N", RFC 9112 section 5.1) are refused with 400, a transfer coding
#      other than chunked with 501, before any body byte is taken (the connection is then
#      closed); the same length twice is accepted; nothing refused reaches the table;
#   2. /metrics follows the token policy: with tokens configured it needs the `metrics`
#      grant (401 without a token, 403 with a token lacking it);
#   3. every JSON answer (a post's, a replayed one's, flush, healthz, each error) is one
#      JSON document ending in a newline.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 1 --seed 3 -o "$tmp/one.ndjson" >/dev/null
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
[table shop.events]
schema = $tmp/schema.json
[token writer]
secret = writer-secret-1
grants = shop.*
[token prom]
secret = prom-secret-22
grants = metrics
[token ops]
secret = ops-secret-333
grants = admin
CONF
start_server --config "$tmp/serve.conf"

# raw HTTP: prints the status line's code, or "closed" when the server closed without an
# answer; with "eof" also checks that the server closed the connection after answering
python3 - "$port" "$tmp/one.ndjson" > "$tmp/framing.txt" <<'PY'
import socket, sys
port, body = int(sys.argv[1]), open(sys.argv[2], "rb").read()
head = (b"POST /v1/tables/shop.events/events HTTP/1.1\r\nHost: x\r\n"
        b"Authorization: Bearer writer-secret-1\r\nContent-Type: application/x-ndjson\r\n")
chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
def exchange(name, fields, payload, want_eof):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    s.sendall(head + fields + b"\r\n" + payload)
    got = b""
    try:
        while b"\r\n\r\n" not in got:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except OSError:
        pass
    if not got:
        print(name, "closed")
        return
    code = got.split(b" ", 2)[1].decode()
    eof = ""
    if want_eof:
        # the rest of the answer, then the end of the connection (not a wait for more)
        try:
            while s.recv(65536):
                pass
            eof = " eof"
        except OSError as e:
            eof = " no-eof(%s)" % e
    print(name, code + eof)
n = len(body)
exchange("cl-conflict", b"Content-Length: %d\r\nContent-Length: %d\r\n" % (n, n + 100), body, True)
exchange("cl-list-conflict", b"Content-Length: %d, %d\r\n" % (n, n + 1), body, True)
exchange("cl-not-a-number", b"Content-Length: %dx\r\n" % n, body, True)
exchange("cl-and-te", b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", chunked, True)
exchange("te-not-chunked", b"Transfer-Encoding: gzip, chunked\r\n", chunked, True)
exchange("te-twice", b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", chunked, True)
exchange("host-twice", b"Host: y\r\nContent-Length: %d\r\n" % n, body, True)
exchange("cl-blank-colon", b"Content-Length : %d\r\n" % n, body, True)
exchange("cl-same-twice", b"Content-Length: %d\r\nContent-Length: %d\r\n" % (n, n), body, False)
exchange("cl-one", b"Content-Length: %d\r\n" % n, body, False)
exchange("te-chunked", b"Transfer-Encoding: chunked\r\n", chunked, False)
PY
want="cl-conflict 400 eof
cl-list-conflict 400 eof
cl-not-a-number 400 eof
cl-and-te 400 eof
te-not-chunked 501 eof
te-twice 400 eof
host-twice 400 eof
cl-blank-colon 400 eof
cl-same-twice 200
cl-one 200
te-chunked 200"
[ "$(cat "$tmp/framing.txt")" = "$want" ] || fail "framing: got
$(cat "$tmp/framing.txt")
want
$want"

# /metrics: the metrics grant
metrics() { curl -s -o "$tmp/metrics.txt" -w '%{http_code}' "http://127.0.0.1:$port/metrics" "$@"; }
[ "$(metrics)" = 401 ] || fail "/metrics without a token: $(head -c 200 "$tmp/metrics.txt")"
[ "$(metrics -H 'Authorization: Bearer writer-secret-1')" = 403 ] || fail "/metrics with a table token"
[ "$(metrics -H 'Authorization: Bearer ops-secret-333')" = 403 ] || fail "/metrics with the admin token"
[ "$(metrics -H 'Authorization: Bearer prom-secret-22')" = 200 ] || fail "/metrics with the metrics token"
# only the three well-framed posts were taken
n=$(awk '$1 == "floe_events_accepted_total{table=\"shop.events\"}" {print $2}' "$tmp/metrics.txt")
[ "$n" = 3 ] || fail "events accepted: $n, want 3 (the refused requests must take nothing)"

# JSON answers end in a newline: NAME STATUS CURL-ARGS... (the body is one JSON document)
json_answer() {
  local name=$1 want=$2 code; shift 2
  code=$(curl -s -o "$tmp/answer.json" -w '%{http_code}' "$@")
  [ "$code" = "$want" ] || fail "$name: HTTP $code, want $want: $(head -c 300 "$tmp/answer.json")"
  [ "$(tail -c 1 "$tmp/answer.json" | od -An -c | tr -d ' ')" = '\n' ] ||
    fail "$name: the answer does not end in a newline: $(head -c 300 "$tmp/answer.json")"
  python3 -c 'import json,sys; json.loads(open(sys.argv[1]).read())' "$tmp/answer.json" ||
    fail "$name: not one JSON document: $(head -c 300 "$tmp/answer.json")"
}
events=(-XPOST "http://127.0.0.1:$port/v1/tables/shop.events/events" -H 'Content-Type: application/x-ndjson'
        -H 'Authorization: Bearer writer-secret-1' --data-binary "@$tmp/one.ndjson")
json_answer post 200 "${events[@]}" -H 'Idempotency-Key: nl-1'
json_answer "post again (the recorded answer)" 200 "${events[@]}" -H 'Idempotency-Key: nl-1'
json_answer "post without a token" 401 -XPOST "http://127.0.0.1:$port/v1/tables/shop.events/events" \
  -H 'Content-Type: application/x-ndjson' --data-binary "@$tmp/one.ndjson"
json_answer "no such endpoint" 404 "http://127.0.0.1:$port/nope"
json_answer healthz 200 "http://127.0.0.1:$port/healthz"
json_answer flush 200 -XPOST "http://127.0.0.1:$port/v1/admin/flush" -H 'Authorization: Bearer ops-secret-333'
json_answer "flush?compact=1" 200 -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" \
  -H 'Authorization: Bearer ops-secret-333'
json_answer "flush?wait=maybe" 400 -XPOST "http://127.0.0.1:$port/v1/admin/flush?wait=maybe" \
  -H 'Authorization: Bearer ops-secret-333'
stop_server
echo "serve_protocol: ok"
