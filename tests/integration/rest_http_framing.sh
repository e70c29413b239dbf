#!/usr/bin/env bash
# rest_http_framing.sh - request heads `floe catalog serve` refuses before reading a body,
# with the check `floe serve` uses (common/httphead.c; adversary adv21g finding G1 on
# issue 21). Each case on one raw connection:
#  - two different Content-Length headers (0 then 59, 59 then 0) whose body is a
#    DELETE of a namespace: one 400 and the connection closed; the namespace is still
#    there (the server framed by the first header, answered 200 and ran the DELETE);
#  - two Host headers (RFC 9112 section 3.2), two Origin headers: 400 (the first one was
#    checked: 200);
#  - Transfer-Encoding: gzip, chunked: a 501 ErrorModel (no answer at all before);
#  - "Content-Length : 59" and "Content-Length\t: 59" (white space before the colon, RFC
#    9112 section 5.1) with a DELETE as the body: 400 and closed (adversary adv21h H3: the
#    field framed nothing, the GET got 200 and the DELETE ran: 204);
#  - two equal Content-Length headers, one Host: served (200).
name=rest_http_framing
source "$(dirname "$0")/lib/rest_serve_common.sh"
for n in victim1 victim2 victim3 victim4; do "$floe" namespace create "$n" >/dev/null; done
start_server

python3 - "$port" <<'PY' || soft "raw HTTP cases"
import json, socket, sys
port = int(sys.argv[1])
fails = []
def fail(msg):
    fails.append(msg)
    print("rest_http_framing: FAIL: " + msg, file=sys.stderr, flush=True)

def exchange(data):
    """(status lines, raw answer, closed) for data sent on one connection, until the
    server closes it or 3 s pass."""
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.sendall(data)
    got, closed = b"", False
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            got += d
    except OSError:
        pass
    s.close()
    text = got.decode("latin-1")
    return [l for l in text.split("\r\n") if l.startswith("HTTP/1.1 ")], text, closed

def case(what, data, want, text=None, closes=True):
    st, raw, closed = exchange(data)
    print("%s: %s%s" % (what, st, ", closed" if closed else ""))
    if len(st) != 1 or not st[0].startswith("HTTP/1.1 %d" % want):
        fail("%s: %s (expected one %d)" % (what, st, want))
        return
    if closes and not closed:
        fail("%s: the connection was left open" % what)
    if want >= 400:
        body = raw.split("\r\n\r\n", 1)[1] if "\r\n\r\n" in raw else ""
        try:
            err = json.loads(body)["error"]
            assert err["code"] == want and (text is None or text in err["message"])
        except Exception:
            fail("%s: not an ErrorModel with code %d%s: %r" %
                 (what, want, " and '%s'" % text if text else "", body[:300]))

for i, (a, b) in enumerate([(0, None), (None, 0)]):
    smug = b"DELETE /v1/namespaces/victim%d HTTP/1.1\r\nHost: localhost\r\n\r\n" % (i + 1)
    cl1 = 0 if a == 0 else len(smug)
    cl2 = 0 if b == 0 else len(smug)
    case("Content-Length %d then %d, a DELETE after" % (cl1, cl2),
         b"GET /v1/config HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n"
         b"Content-Length: %d\r\n\r\n" % (cl1, cl2) + smug, 400, "Content-Length")
for i, blank in ((3, b" "), (4, b"\t")):
    smug = b"DELETE /v1/namespaces/victim%d HTTP/1.1\r\nHost: localhost\r\n\r\n" % i
    case("Content-Length%r: a DELETE after" % blank,
         b"GET /v1/config HTTP/1.1\r\nHost: localhost\r\nContent-Length" + blank +
         b": %d\r\n\r\n" % len(smug) + smug, 400, "header field name")
case("two Host headers",
     b"GET /v1/config HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n"
     b"Connection: close\r\n\r\n", 400, "Host")
case("two Origin headers",
     b"GET /v1/config HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n"
     b"Origin: http://evil.example\r\nConnection: close\r\n\r\n", 400, "Origin")
case("Transfer-Encoding: gzip, chunked",
     b"POST /v1/namespaces HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
     b"Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nxxxxx\r\n0\r\n\r\n", 501, "chunked")
case("two equal Content-Length headers",
     b"GET /v1/config HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n"
     b"Content-Length: 0\r\nConnection: close\r\n\r\n", 200)
sys.exit(1 if fails else 0)
PY
for n in victim1 victim2 victim3 victim4; do
  st=$(curl -s -o "$tmp/body" -w '%{http_code}' "$base/v1/namespaces/$n")
  [ "$st" = 200 ] || soft "namespace $n: GET -> $st: deleted by the request smuggled in a body"
done
server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
