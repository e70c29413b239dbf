#!/usr/bin/env python3
"""Checks a table fed from Kafka against the events produced.

  verify.py WAREHOUSE TABLE FLOE_BIN GROUP EVENTS MALFORMED_LINES [EVENTS MALFORMED_LINES...]

- the table holds every valid event exactly once (by event_id) with its content
  (event_type, user_id, ts, payload), and nothing else;
- the quarantine (_quarantine/TABLE/kafka-GROUP-*.ndjson) holds every malformed line
  exactly once, each with its topic, partition and offset, and nothing else.
"""
import base64, collections, glob, json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration", "serve"))
from verify import same_content  # noqa: E402

def main():
    wh, table, floe, group = sys.argv[1:5]
    rest = sys.argv[5:]
    valid, malformed = {}, collections.Counter()
    for ev, ml in zip(rest[0::2], rest[1::2]):
        lines = open(ev, "rb").read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        bad = {int(x) for x in open(ml).read().split()}
        for i, l in enumerate(lines, 1):
            if i in bad:
                malformed[l] += 1
            else:
                j = json.loads(l)
                valid[j["event_id"]] = j
    problems = []
    env = dict(os.environ, FLOE_CATALOG_URI=os.path.join(wh, "catalog.db"), FLOE_WAREHOUSE=wh)
    out = subprocess.run([floe, "scan", table, "--columns",
                          "event_id,event_type,user_id,ts,payload"], env=env, check=True,
                         capture_output=True).stdout
    got = collections.Counter()
    for r in out.split(b"\n"):
        if not r:
            continue
        row = json.loads(r)
        got[row["event_id"]] += 1
        exp = valid.get(row["event_id"])
        if exp is None:
            problems.append(f"row not among the valid events: {row['event_id']}")
        elif not same_content(exp, row):
            problems.append(f"row differs from its event: {row} vs {exp}")
    dups = [k for k, n in got.items() if n > 1]
    missing = [k for k in valid if got[k] == 0]
    if dups:
        problems.append(f"{len(dups)} events in the table more than once, e.g. {dups[0]}")
    if missing:
        problems.append(f"{len(missing)} valid events missing from the table, e.g. {missing[0]}")
    quarantined = collections.Counter()
    coords = collections.Counter()
    for f in glob.glob(os.path.join(wh, "_quarantine", table, f"kafka-{group}-*.ndjson")):
        for l in open(f, "rb"):
            if not l.strip():
                continue
            q = json.loads(l)
            if not q.get("source", "").startswith("kafka:") or "offset" not in q:
                problems.append(f"quarantine line without its topic/partition/offset: {q}")
            coords[(q.get("source"), q.get("offset"))] += 1
            rec = q.get("record")
            if rec is not None:
                quarantined[rec.encode()] += 1
            elif "record_base64" in q:  # a record that is not UTF-8
                quarantined[base64.b64decode(q["record_base64"])] += 1
            else:
                quarantined[b"<no record>"] += 1
    twice = [c for c, n in coords.items() if n > 1]
    if twice:
        problems.append(f"{len(twice)} messages quarantined more than once, e.g. {twice[0]}")
    if quarantined != malformed:
        extra = quarantined - malformed
        lost = malformed - quarantined
        problems.append(f"quarantine differs: {sum(lost.values())} malformed lines missing "
                        f"(e.g. {list(lost)[:1]}), {sum(extra.values())} extra "
                        f"(e.g. {list(extra)[:1]})")
    print(f"verify: {sum(got.values())} rows ({len(valid)} valid events), "
          f"{sum(quarantined.values())} quarantined ({sum(malformed.values())} malformed)")
    for p in problems[:10]:
        print("PROBLEM:", p)
    sys.exit(1 if problems else 0)

main()
