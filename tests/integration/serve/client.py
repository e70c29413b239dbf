#!/usr/bin/env python3
"""Load client for the serve_* tests: posts batches of NDJSON lines to `floe serve`.

Client i posts batches i, i+N, i+2N ... of the event file (batch-size lines each), over one
keep-alive connection. On a connection error, a 5xx or a 503, it waits and posts the SAME
batch again (same Idempotency-Key when --keys), re-reading the port file: the server may
have been killed and restarted. Every acknowledged batch is logged as one JSON line
{"batch": b, "response": {...}} in OUT/ack-<i>.jsonl. The client stops when every batch is
acknowledged or when the stop file appears. --pace spreads the posts over time (a client
waits that long after each acknowledged batch).
"""
import argparse, http.client, json, os, random, sys, threading, time

def valid_json(l):
    try:
        json.loads(l)
        return True
    except ValueError:
        return False

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--events", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--keys", action="store_true")
    ap.add_argument("--key-prefix", default="b-", help="Idempotency-Key = PREFIX + batch number")
    ap.add_argument("--token")
    ap.add_argument("--out", required=True)
    ap.add_argument("--stop-file")
    ap.add_argument("--array", action="store_true", help="every other batch as a JSON array")
    ap.add_argument("--pace", type=float, default=0.0,
                    help="seconds each client waits after an acknowledged batch")
    a = ap.parse_args()
    lines = open(a.events, "rb").read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    batches = [lines[i:i + a.batch_size] for i in range(0, len(lines), a.batch_size)]
    os.makedirs(a.out, exist_ok=True)
    failures = []

    def port():
        for _ in range(600):
            try:
                return int(open(a.port_file).read().strip())
            except Exception:
                time.sleep(0.05)
        raise RuntimeError("no port file")

    def run(ci):
        rnd = random.Random(ci)
        log = open(os.path.join(a.out, f"ack-{ci}.jsonl"), "w")
        conn = None
        for b in range(ci, len(batches), a.clients):
            body_lines = batches[b]
            as_array = a.array and b % 2 == 1 and all(valid_json(l) for l in body_lines)
            if as_array:
                body = b"[\n" + b",\n".join(body_lines) + b"\n]"
                ctype = "application/json"
            else:
                body = b"\n".join(body_lines) + b"\n"
                ctype = "application/x-ndjson"
            headers = {"Content-Type": ctype}
            if a.keys:
                headers["Idempotency-Key"] = f"{a.key_prefix}{b}"
            if a.token:
                headers["Authorization"] = f"Bearer {a.token}"
            while True:
                if a.stop_file and os.path.exists(a.stop_file):
                    log.close()
                    return
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", port(), timeout=30)
                    conn.request("POST", f"/v1/tables/{a.table}/events", body, headers)
                    r = conn.getresponse()
                    data = r.read()
                    if r.status == 200:
                        log.write(json.dumps({"batch": b, "array": as_array,
                                              "response": json.loads(data)}) + "\n")
                        log.flush()
                        if a.pace > 0:
                            time.sleep(a.pace)
                        break
                    if r.status not in (503, 429, 500):
                        failures.append(f"batch {b}: HTTP {r.status} {data[:200]!r}")
                        log.close()
                        return
                    conn.close()
                    conn = None
                except (OSError, http.client.HTTPException):
                    if conn:
                        conn.close()
                    conn = None
                time.sleep(0.05 + rnd.random() * 0.2)
        log.close()

    ts = [threading.Thread(target=run, args=(i,)) for i in range(a.clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)

if __name__ == "__main__":
    main()
