#!/usr/bin/env bash
# rest_slow_clients.sh - slow and idle clients do not shut others out of `floe catalog
# serve` (adversary finding 5 on issue 21; common/connguard.h, shared with floe serve):
#  - 300 connections that each sent part of a request's headers (more than the 256
#    served at once): a normal request still gets its answer, within a few seconds (the
#    connection waiting longest for its headers makes room for it); before, every other
#    client got "connection reset" for as long as the slow ones trickled a byte now and
#    then;
#  - a connection trickling a header byte every second is closed after the 10 s header
#    timeout (before, only 60 s of silence closed it, so a byte a minute held it forever).
name=rest_slow_clients
. "$(dirname "$0")/lib/rest_serve_common.sh"
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge 1024 ] || ulimit -n 1024 2>/dev/null ||
  { echo "rest_slow_clients: fewer than 1024 file descriptors, skipped"; exit 77; }
start_server

python3 - "$(cat "$tmp/port")" <<'PY'
import socket, sys, time, urllib.request
port = int(sys.argv[1])
fails = []
def fail(msg):
    fails.append(msg)
    print("rest_slow_clients: FAIL: " + msg, file=sys.stderr, flush=True)

# one connection trickling its headers, a byte a second: closed by the header timeout
trickle = {}
def trickler():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /v1/config HTTP/1.1\r\nHost: x\r\n")
    t0 = time.time()
    while time.time() - t0 < 20:
        time.sleep(1)
        try:
            s.sendall(b"X")
            s.settimeout(0.01)
            if s.recv(1) == b"":
                break
        except socket.timeout:
            continue
        except OSError:
            break
    trickle["closed_after"] = time.time() - t0
    s.close()
slow = []
for i in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /v1/config HTTP/1.1\r\nHost: x\r\n")
        slow.append(s)
    except OSError:
        pass
time.sleep(1.5)  # past the grace of young connections
for attempt in range(3):
    for s in slow:
        try: s.sendall(b"X")
        except OSError: pass
    t = time.time()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/v1/config" % port, timeout=10) as r:
            status = r.status
    except Exception as e:
        status = "error: %s" % e
    took = time.time() - t
    print("request %d beside %d slow connections: %s in %.2f s" % (attempt + 1, len(slow), status, took))
    if status != 200 or took > 5:
        fail("request %d beside slow connections: %s after %.1f s (expected 200 at once)" % (attempt + 1, status, took))
    time.sleep(0.5)
for s in slow:
    s.close()
# alone now (among the slow ones it could be taken to make room instead)
time.sleep(0.5)
trickler()
took = trickle.get("closed_after", 99)
print("a connection trickling its headers closed after %.1f s" % took)
if not 9 <= took <= 14:
    fail("a connection trickling its headers was closed after %.1f s, not after the 10 s header timeout" % took)
sys.exit(1 if fails else 0)
PY
kill -0 "$pid" || { echo "rest_slow_clients: FAIL: the server died: $(tail -5 "$tmp/server.log")"; exit 1; }
echo "rest_slow_clients: ok"
