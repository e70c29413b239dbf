#!/usr/bin/env python3
"""Hostile HTTP clients for the serve_* tests (and bench/budget).

  attack.py stall PORT N BYTES HOLD_S TABLE
      N connections each announce a body of BYTES (Content-Length), send all of it but the
      last byte and hold the connection for HOLD_S seconds. Prints one line per outcome:
      "held" (the server kept reading), or the status the server answered early with.
  attack.py burst PORT N FILE ENCODING TABLE
      N posts of FILE (Content-Encoding ENCODING) at once. Prints the statuses, then
      "retry-after-missing" for any 503 without Retry-After.
  attack.py slow PORT N MODE HOLD_S
      N connections that trickle (MODE headers: a header byte every second; MODE body: a
      Content-Length of 1 MB and a body byte every second) for HOLD_S seconds, while the
      caller does its own requests. Prints "cut" or "held" per connection at the end.
"""
import select
import socket
import sys
import threading
import time

HEAD = ("POST /v1/tables/{t}/events HTTP/1.1\r\nHost: x\r\n"
        "Content-Type: application/x-ndjson\r\n")


def status_of(data):
    try:
        return data.split(b" ", 2)[1].decode()
    except Exception:
        return "?"


def stall(port, n, size, hold, table):
    out = []
    lock = threading.Lock()
    chunk = b" " * (1 << 20)

    def one():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall((HEAD.format(t=table) + "Content-Length: %d\r\n\r\n" % size).encode())
        sent, answer = 0, b""
        try:
            while sent < size - 1:
                k = min(len(chunk), size - 1 - sent)
                s.sendall(chunk[:k])
                sent += k
                # an early answer (the server refused before reading the body)?
                r, _, _ = select.select([s], [], [], 0)
                if r:
                    answer = s.recv(4096)
                    break
        except OSError:
            pass
        if not answer:
            s.settimeout(hold)
            try:
                answer = s.recv(4096)
            except OSError:
                pass
        with lock:
            out.append(status_of(answer) if answer else "held")
        s.close()

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in sorted(out):
        print(o)


def burst(port, n, path, encoding, table):
    body = open(path, "rb").read()
    out = []
    lock = threading.Lock()
    go = threading.Event()

    def one():
        s = socket.create_connection(("127.0.0.1", port))
        go.wait()
        req = (HEAD.format(t=table) + "Content-Encoding: %s\r\nContent-Length: %d\r\n"
               "Connection: close\r\n\r\n" % (encoding, len(body))).encode() + body
        try:
            s.sendall(req)
        except OSError:
            pass
        got = b""
        s.settimeout(600)
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                got += d
        except OSError:
            pass
        st = status_of(got)
        with lock:
            out.append(st)
            if st == "503" and b"\r\nretry-after:" not in got.lower():
                out.append("retry-after-missing")
        s.close()

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    go.set()
    for t in threads:
        t.join()
    for o in sorted(out):
        print(o)


def slow(port, n, mode, hold):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        if mode == "body":
            s.sendall((HEAD.format(t="shop.events") + "Content-Length: 1000000\r\n\r\n").encode())
        else:
            s.sendall(b"POST /v1/tables/shop.events/events HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    print("connected", flush=True)
    alive = [True] * n
    t0 = time.time()
    while time.time() - t0 < hold:
        for i, s in enumerate(socks):
            if not alive[i]:
                continue
            try:
                s.send(b" " if mode == "body" else b"X")
            except OSError:
                alive[i] = False
        time.sleep(1)
    for i, s in enumerate(socks):
        print("held" if alive[i] else "cut")
        s.close()


if __name__ == "__main__":
    cmd, port = sys.argv[1], int(sys.argv[2])
    if cmd == "stall":
        stall(port, int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
    elif cmd == "burst":
        burst(port, int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6])
    elif cmd == "slow":
        slow(port, int(sys.argv[3]), sys.argv[4], float(sys.argv[5]))
    else:
        sys.exit("unknown command " + cmd)
