#!/usr/bin/env bash
# rest_http_edges.sh - HTTP framing and the Authorization header at `floe catalog serve
# --tokens` (adversary adv21c finding 10 b, c on issue 21):
#  - a request with both Content-Length and Transfer-Encoding is answered 400 and its
#    connection closed at once, a GET sent after it on the same connection unanswered
#    (the connection was kept open; the adversary saw such a GET answered 200: a request
#    smuggled past a proxy that frames by Content-Length);
#  - white space after the secret is not part of it (HTTP's optional white space: 200,
#    was 401); two Authorization headers are a 400, in either order (the first one was
#    used: 403 one way, 200 the other).
name=rest_http_edges
source "$(dirname "$0")/lib/rest_serve_common.sh"
printf '[token ops]\nsecret = opssecret1\ngrants = *\n[token shop]\nsecret = shopsecret1\ngrants = shop.*\n' > "$tmp/tokens.ini"
chmod 600 "$tmp/tokens.ini"  # it holds secrets: catalog serve refuses one others may read
start_server --tokens "$tmp/tokens.ini"

python3 - "$port" <<'PY'
import socket, sys
port = int(sys.argv[1])
fails = []
def fail(msg):
    fails.append(msg)
    print("rest_http_edges: FAIL: " + msg, file=sys.stderr, flush=True)

closed = [False]
def exchange(data):
    """Every status line the server sends for data on one connection, until it closes
    (closed[0]) or 5 s pass."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(data)
    got = b""
    closed[0] = False
    try:
        while True:
            d = s.recv(65536)
            if not d:
                closed[0] = True
                break
            got += d
    except OSError:
        pass
    s.close()
    return [l for l in got.decode("latin-1").split("\r\n") if l.startswith("HTTP/1.1 ")]

get = b"GET /v1/config HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer opssecret1\r\n\r\n"
st = exchange(b"POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer opssecret1\r\n"
              b"Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"0\r\n\r\n" + get)
print("Content-Length + Transfer-Encoding, then a GET on the connection: %s, %s" %
      (st, "closed" if closed[0] else "left open"))
if not st or not st[0].startswith("HTTP/1.1 400") or len(st) != 1 or not closed[0]:
    fail("Content-Length with Transfer-Encoding: %s (expected one 400 and the connection closed)" % st)

def status(auth_lines):
    st = exchange(b"GET /v1/namespaces/shop HTTP/1.1\r\nHost: x\r\n" + auth_lines + b"Connection: close\r\n\r\n")
    return st[0].split(" ")[1] if st else "none"
for name, lines, want in [
        ("trailing space", b"Authorization: Bearer opssecret1 \r\n", "404"),
        ("trailing tab", b"Authorization: Bearer opssecret1\t\r\n", "404"),
        ("shop then ops", b"Authorization: Bearer shopsecret1\r\nAuthorization: Bearer opssecret1\r\n", "400"),
        ("ops then shop", b"Authorization: Bearer opssecret1\r\nAuthorization: Bearer shopsecret1\r\n", "400"),
        ("a wrong secret", b"Authorization: Bearer opssecret1x\r\n", "401"),
        ("a prefix of the secret", b"Authorization: Bearer opssecret\r\n", "401")]:
    got = status(lines)
    print("Authorization %s: %s" % (name, got))
    if got != want:
        fail("Authorization %s: %s (expected %s)" % (name, got, want))
sys.exit(1 if fails else 0)
PY
server_alive
echo "rest_http_edges: ok"
