#!/usr/bin/env python3
"""Checks what `floe serve` stored against what the clients were told.

  verify.py EVENTS BATCH_SIZE ACK_DIR WAREHOUSE TABLE [--keys] [--all-acked]
            [--table FLOE_BIN [--icebird ICEBIRD_READ_MJS]]

- every accepted record of every acknowledged batch is in the landing files exactly once
  (by its exact text); with --keys no record is there twice at all;
- every rejected record of an acknowledged batch is in the quarantine (by its text);
- with --all-acked every batch was acknowledged;
- with --table FLOE_BIN, the Iceberg table (read with `floe scan` through the warehouse's
  catalog) holds every accepted record of every acknowledged batch exactly once, by
  event_id, with its content (event_type, user_id, ts, payload), and nothing else;
- with --icebird NODE_SCRIPT as well, icebird (an independent reader) sees the same
  event_ids in the table's current snapshot.
"""
import collections, datetime, glob, json, os, sqlite3, subprocess, sys

def landing_lines(path):
    """Lines of a landing file in any codec floe writes (sniffed as floe's reader does):
    LZ4 frames (the default), zstd frames (before LZ4, or landing_codec = zstd), plain."""
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == b"\x04\x22\x4d\x18":
        out = subprocess.run(["lz4cat", path], check=True, capture_output=True).stdout
    elif magic == b"\x28\xb5\x2f\xfd":
        out = subprocess.run(["zstdcat", path], check=True, capture_output=True).stdout
    else:
        with open(path, "rb") as f:
            out = f.read()
    return [l for l in out.split(b"\n") if l]

def ts_micros(v):
    """Microseconds since the epoch of an RFC 3339 text (any offset, up to 9 digits)."""
    date, _, rest = v.replace("t", "T").partition("T")
    off = 0
    for sign in ("Z", "z", "+", "-"):
        i = rest.find(sign)
        if i >= 0:
            tail, rest = rest[i:], rest[:i]
            if sign in "+-":
                hh, mm = tail[1:].split(":")
                off = (int(hh) * 60 + int(mm)) * 60 * (1 if sign == "+" else -1)
            break
    hms, _, frac = rest.partition(".")
    base = datetime.datetime.fromisoformat(f"{date}T{hms}+00:00")
    return int(base.timestamp() - off) * 1000000 + int((frac + "000000")[:6])

def same_content(event, row):
    return (event["event_type"] == row["event_type"] and event["user_id"] == row["user_id"]
            and event.get("payload") == row.get("payload")
            and ts_micros(event["ts"]) == ts_micros(row["ts"]))

def main():
    events, bs, ack_dir, wh, table = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    opts = sys.argv[6:]
    keys = "--keys" in opts
    floe = opts[opts.index("--table") + 1] if "--table" in opts else None
    icebird = opts[opts.index("--icebird") + 1] if "--icebird" in opts else None
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
    for f in glob.glob(os.path.join(wh, "_landing", table, "**", "*.ndjson*"), recursive=True):
        for l in landing_lines(f):
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
    in_table = 0
    if floe:
        want = {}
        for l, n in expect_accepted.items():
            j = json.loads(l)
            want[j["event_id"]] = (j, want.get(j["event_id"], (None, 0))[1] + n)
        env = dict(os.environ, FLOE_CATALOG_URI=os.path.join(wh, "catalog.db"),
                   FLOE_WAREHOUSE=wh, FLOE_CATALOG="default")
        env.pop("FLOE_CONFIG", None)
        out = subprocess.run([floe, "scan", table, "--columns",
                              "event_id,event_type,user_id,ts,payload"], env=env, check=True,
                             capture_output=True).stdout
        got = collections.Counter()
        bad_content = 0
        for r in out.split(b"\n"):
            if not r:
                continue
            row = json.loads(r)
            got[row["event_id"]] += 1
            in_table += 1
            exp = want.get(row["event_id"])
            if exp and not same_content(exp[0], row):
                bad_content += 1
                if bad_content <= 3:
                    problems.append(f"table row differs from the event: {row} vs {exp[0]}")
        wanted = collections.Counter({k: v[1] for k, v in want.items()})
        missing = wanted - got
        extra = got - wanted
        if missing:
            problems.append(f"{sum(missing.values())} accepted events missing from the table, "
                            f"e.g. {next(iter(missing))}")
        if extra:
            problems.append(f"{sum(extra.values())} rows in the table beyond the accepted events "
                            f"(duplicates or unknown), e.g. {next(iter(extra))}")
        if icebird:
            con = sqlite3.connect(os.path.join(wh, "catalog.db"))
            ns, name = table.rsplit(".", 1)
            loc = con.execute("SELECT metadata_location FROM iceberg_tables WHERE "
                              "table_namespace=? AND table_name=?", (ns, name)).fetchone()[0]
            out = subprocess.run(["node", icebird, "--metadata", loc], check=True,
                                 capture_output=True).stdout
            ib = collections.Counter(json.loads(r)["event_id"] for r in out.split(b"\n") if r)
            if ib != got:
                problems.append(f"icebird reads {sum(ib.values())} rows ({len(ib)} ids), "
                                f"floe scan {sum(got.values())} ({len(got)} ids)")
    print(f"verify: {len(acks)} batches acknowledged, {accepted} accepted, {rejected} rejected, "
          f"{sum(landing.values())} records in landing files, {sum(quarantine.values())} in "
          f"quarantine" + (f", {in_table} rows in the table" if floe else ""))
    if problems:
        for p in problems[:20]:
            print("FAIL:", p, file=sys.stderr)
        sys.exit(1)

if __name__ == "__main__":
    main()
