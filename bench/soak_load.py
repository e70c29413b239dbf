#!/usr/bin/env python3
"""Load generator for bench/soak: posts batches of generated events to `floe serve` until
a stop file appears.

Each batch is BATCH_SIZE lines of a template file (floe gen output) with event_id
replaced by a UUID that encodes the batch number and the line's index in it
(%08x-%04x-4000-8000-000000000000), so the checker can tell from an event_id alone which
batch it came from and whether it was acknowledged. Client c posts batches c, c+N,
c+2N ... over one keep-alive connection, each with Idempotency-Key soak-<batch>. On a
connection error or a 5xx it waits and posts the SAME batch (same key) again, re-reading
the port file: the server is killed and restarted under it. Any other status is a
failure (exit 1).

--port-file may be given once per ingest node (bench/chaos): a client then posts to a
random node and moves to another one after each failure, so a retry of a key may land on
a node other than the one that took (or claimed) it; 409 (the key is claimed by a node
still working on it, or by a killed node not yet restarted) is retried like a 5xx.
--pause S: each client waits S seconds after each acknowledged batch (a bounded rate).
--keyless-clients K: the first K clients send no Idempotency-Key; a keyless batch whose
post fails (no answer, or any status but 200) is not retried, so it is recorded in OUT/maybe-<c>.txt (its
events may be in the table once, or not at all) and the client goes on with its next batch.

OUT/acked-<c>.txt gets "batch accepted rejected" per acknowledged batch; OUT/abandoned-<c>.txt
the batch that was in flight when the stop file appeared (it may or may not have been
stored; the checker allows its events in the table once, and no more); OUT/answers-<c>.txt
counts the answers by HTTP status ("status count" lines; 0 = no answer).
"""
import argparse, http.client, json, os, random, sys, threading, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True, action="append")
    ap.add_argument("--template", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=200)
    ap.add_argument("--token")
    ap.add_argument("--out", required=True)
    ap.add_argument("--stop-file", required=True)
    ap.add_argument("--keyless-clients", type=int, default=0)
    ap.add_argument("--pause", type=float, default=0, help="seconds between a client's batches")
    a = ap.parse_args()
    template = [json.loads(l) for l in open(a.template, "rb") if l.strip()]
    os.makedirs(a.out, exist_ok=True)
    failures = []

    def port(rnd):
        while True:
            for pf in rnd.sample(a.port_file, len(a.port_file)):
                try:
                    return int(open(pf).read().strip())
                except (OSError, ValueError):
                    pass
            if os.path.exists(a.stop_file):
                return None
            time.sleep(0.05)

    def body_of(b):
        out = []
        for i in range(a.batch_size):
            ev = dict(template[(b * a.batch_size + i) % len(template)])
            ev["event_id"] = "%08x-%04x-4000-8000-000000000000" % (b, i)
            out.append(json.dumps(ev, separators=(",", ":")))
        return ("\n".join(out) + "\n").encode()

    def run(ci):
        rnd = random.Random(ci)
        acked = open(os.path.join(a.out, f"acked-{ci}.txt"), "w")
        conn = None
        b = ci
        retries = 0
        keyed = ci >= a.keyless_clients
        answers = {}
        maybe = open(os.path.join(a.out, f"maybe-{ci}.txt"), "w")
        while True:
            body = body_of(b)
            headers = {"Content-Type": "application/x-ndjson"}
            if keyed:
                headers["Idempotency-Key"] = f"soak-{b}"
            if a.token:
                headers["Authorization"] = f"Bearer {a.token}"
            while True:
                if os.path.exists(a.stop_file):
                    with open(os.path.join(a.out, f"abandoned-{ci}.txt"), "w") as f:
                        f.write(f"{b}\n")
                    with open(os.path.join(a.out, f"retries-{ci}.txt"), "w") as f:
                        f.write(f"{retries}\n")
                    with open(os.path.join(a.out, f"answers-{ci}.txt"), "w") as f:
                        f.writelines(f"{k} {v}\n" for k, v in sorted(answers.items()))
                    acked.close()
                    maybe.close()
                    return
                status = 0
                try:
                    if conn is None:
                        p = port(rnd)
                        if p is None:
                            continue
                        conn = http.client.HTTPConnection("127.0.0.1", p, timeout=30)
                    conn.request("POST", f"/v1/tables/{a.table}/events", body, headers)
                    r = conn.getresponse()
                    data = r.read()
                    status = r.status
                    answers[status] = answers.get(status, 0) + 1
                    if r.status == 200:
                        j = json.loads(data)
                        acked.write(f"{b} {j['accepted']} {j['rejected']}\n")
                        acked.flush()
                        break
                    if r.status < 500 and r.status != 409:
                        failures.append(f"batch {b}: HTTP {r.status} {data[:200]!r}")
                        acked.close()
                        return
                    conn.close()
                    conn = None
                except (OSError, http.client.HTTPException):
                    answers[0] = answers.get(0, 0) + 1
                    if conn:
                        conn.close()
                    conn = None
                if not keyed:
                    # without a key a failed request may have been taken: never sent again
                    maybe.write(f"{b}\n")
                    maybe.flush()
                    break
                retries += 1
                time.sleep(0.05 + rnd.random() * 0.2)
            b += a.clients
            if a.pause:
                time.sleep(a.pause)

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
