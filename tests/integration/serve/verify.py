#!/usr/bin/env python3
"""Checks what `floe serve` stored against what the clients were told.

  verify.py EVENTS BATCH_SIZE ACK_DIR WAREHOUSE TABLE [--keys] [--all-acked]
            [--parquet FLOE_BIN]

- every accepted record of every acknowledged batch is in the landing files exactly once
  (by its exact text); with --keys no record is there twice at all;
- every rejected record of an acknowledged batch is in the quarantine (by its text);
- with --all-acked every batch was acknowledged;
- with --parquet, the compacted Parquet files (from the commit log) hold exactly the
  event_ids of the landing files.
"""
import collections, glob, json, os, subprocess, sys

def zstd_lines(path):
    out = subprocess.run(["zstdcat", path], check=True, capture_output=True).stdout
    return [l for l in out.split(b"\n") if l]

def main():
    events, bs, ack_dir, wh, table = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    opts = sys.argv[6:]
    keys = "--keys" in opts
    floe = opts[opts.index("--parquet") + 1] if "--parquet" in opts else None
    lines = open(events, "rb").read().split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    nb = (len(lines) + bs - 1) // bs
    acks = {}
    for f in glob.glob(os.path.join(ack_dir, "ack-*.jsonl")):
        for l in open(f):
            l = l.strip()
            if l:
                j = json.loads(l)
                acks[j["batch"]] = j["response"]
    problems = []
    if "--all-acked" in opts and len(acks) != nb:
        problems.append(f"{nb - len(acks)} of {nb} batches never acknowledged")
    landing = collections.Counter()
    for f in glob.glob(os.path.join(wh, "_landing", table, "**", "*.ndjson.zst"), recursive=True):
        for l in zstd_lines(f):
            landing[l] += 1
    quarantine = collections.Counter()
    for f in glob.glob(os.path.join(wh, "_quarantine", table, "*.ndjson")):
        if os.path.basename(f).startswith("compact-"):
            continue
        for l in open(f, "rb"):
            if l.strip():
                q = json.loads(l)
                rec = q.get("record")
                quarantine[rec.encode() if rec is not None else b"<base64>"] += 1
    accepted = rejected = 0
    expect_accepted = collections.Counter()
    for b, resp in acks.items():
        batch = lines[b * bs:(b + 1) * bs]
        bad = {e["index"] for e in resp["errors"]}
        if resp["accepted"] + resp["rejected"] != len(batch) or len(bad) != resp["rejected"]:
            problems.append(f"batch {b}: counts do not add up: {resp['accepted']} + "
                            f"{resp['rejected']} != {len(batch)}")
            continue
        for i, l in enumerate(batch):
            if i in bad:
                rejected += 1
                if quarantine[l] < 1 and quarantine[l.strip()] < 1:
                    problems.append(f"batch {b} record {i}: rejected but not in the quarantine")
            else:
                accepted += 1
                expect_accepted[l] += 1
    for l, n in expect_accepted.items():
        got = landing[l]
        if got < n:
            problems.append(f"acknowledged record missing from the landing files: {l[:80]!r}")
        elif got > n and keys:
            problems.append(f"record stored {got} times: {l[:80]!r}")
    if keys:
        dups = [l for l, n in landing.items() if n > 1]
        if dups:
            problems.append(f"{len(dups)} records stored more than once, e.g. {dups[0][:80]!r}")
    if floe:
        ids = collections.Counter()
        for l in open(os.path.join(wh, "_landing", "_commits.ndjson")):
            c = json.loads(l)
            if c["table"] != table:
                continue
            for df in c["data_files"]:
                out = subprocess.run([floe, "cat", df["uri"], "--columns", "event_id"],
                                     check=True, capture_output=True).stdout
                for r in out.split(b"\n"):
                    if r:
                        ids[json.loads(r)["event_id"]] += 1
        want = collections.Counter(json.loads(l)["event_id"] for l in landing.elements())
        if ids != want:
            problems.append(f"parquet holds {sum(ids.values())} rows ({len(ids)} ids), landing "
                            f"{sum(want.values())} ({len(want)} ids)")
    print(f"verify: {len(acks)} batches acknowledged, {accepted} accepted, {rejected} rejected, "
          f"{sum(landing.values())} records in landing files, {sum(quarantine.values())} in "
          f"quarantine")
    if problems:
        for p in problems[:20]:
            print("FAIL:", p, file=sys.stderr)
        sys.exit(1)

if __name__ == "__main__":
    main()
