#!/usr/bin/env python3
"""Checks a table against what bench/soak_load.py was told (bench/soak, bench/chaos).

    soak_check.py ACKS_DIR IDS_NDJSON  -> one JSON object on stdout

IDS_NDJSON is `floe scan TABLE --columns event_id`. An event_id names its batch (the first
8 hex digits). Acknowledged batches (acked-*.txt: "batch accepted rejected") must be in the
table exactly once; the batch in flight at the stop (abandoned-*.txt) and keyless batches
whose post failed (maybe-*.txt) may be there once or not at all; anything else is unknown.
"""
import collections, glob, json, os, sys


def numbers(pattern):
    out = set()
    for f in glob.glob(pattern):
        out.update(int(l) for l in open(f) if l.strip())
    return out


def main():
    acks, ids = sys.argv[1], sys.argv[2]
    acked = {}
    for f in glob.glob(os.path.join(acks, "acked-*.txt")):
        for l in open(f):
            b, acc, rej = map(int, l.split())
            acked[b] = (acc, rej)
    loose = numbers(os.path.join(acks, "abandoned-*.txt")) | numbers(os.path.join(acks, "maybe-*.txt"))
    got = collections.Counter()
    rows = 0
    for l in open(ids):
        if l.strip():
            got[json.loads(l)["event_id"]] += 1
            rows += 1
    batch_of = lambda eid: int(eid[:8], 16)
    dups = sum(n - 1 for n in got.values() if n > 1)
    in_table = collections.Counter(batch_of(e) for e in got)
    missing = sum(max(0, acc - in_table.get(b, 0)) for b, (acc, _) in acked.items())
    unknown = sum(n for e, n in got.items() if batch_of(e) not in acked and batch_of(e) not in loose)
    loose_stored = sum(n for e, n in got.items() if batch_of(e) in loose and batch_of(e) not in acked)
    print(json.dumps({"batches_acknowledged": len(acked),
                      "events_acknowledged": sum(a for a, _ in acked.values()),
                      "events_rejected": sum(r for _, r in acked.values()),
                      "rows": rows, "distinct_event_ids": len(got), "duplicates": dups,
                      "acknowledged_missing": missing, "unknown_rows": unknown,
                      "in_flight_at_stop_stored": loose_stored,
                      "unanswered_batches": len(loose)}))


if __name__ == "__main__":
    main()
