#!/usr/bin/env python3
"""bench/lib/disk_profile.py FLOE TABLE DATA_DIR - where a table's data bytes on disk go.

One walk of DATA_DIR (the table's data folder), then, from the catalog in the environment
(FLOE_CATALOG_URI, FLOE_WAREHOUSE): the files of the current snapshot (live), the files
only the older snapshots still kept reach (retained for readers until expiry), and the
files no kept snapshot reaches (expired but not yet deleted, or a rewrite's output before
its commit). Prints one JSON line, sizes in MiB. Run beside bench/streaming (--keep) to
see what its bytes on disk / live are made of; one `floe files` per snapshot, so it takes
a while on a table that keeps hundreds.
"""
import json
import os
import subprocess
import sys


def floe_json(floe, *args):
    r = subprocess.run([floe, *args, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"floe {' '.join(args)}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: disk_profile.py FLOE TABLE DATA_DIR")
    floe, table, data_dir = sys.argv[1:]
    disk = {}
    for root, _, files in os.walk(data_dir):
        for f in files:
            p = os.path.join(root, f)
            try:
                disk[p] = os.path.getsize(p)
            except OSError:
                pass
    snaps = floe_json(floe, "snapshots", table)
    cur = next(s for s in snaps if s["current"])
    live = {f["path"]: f["bytes"] for f in floe_json(floe, "files", table)}
    kept = dict(live)
    for s in snaps:
        if not s["current"]:
            for f in floe_json(floe, "files", table, "--snapshot", str(s["snapshot_id"])):
                kept.setdefault(f["path"], f["bytes"])
    mib = 1 << 20
    live_b = sum(live.values())
    retained = sum(v for p, v in kept.items() if p not in live and p in disk)
    unref = sum(v for p, v in disk.items() if p not in kept)
    total = sum(disk.values())
    replaces = [s for s in snaps if s["summary"].get("operation") == "replace"]
    print(json.dumps({
        "snapshots": len(snaps),
        "retained_s": round((cur["timestamp_ms"] - min(s["timestamp_ms"] for s in snaps)) / 1000),
        "disk_mb": round(total / mib, 1), "live_mb": round(live_b / mib, 1),
        "retained_only_mb": round(retained / mib, 1), "unreferenced_mb": round(unref / mib, 1),
        "disk_over_live": round(total / live_b, 2) if live_b else None,
        "rewritten_in_window_mb": round(sum(int(s["summary"].get("added-files-size", 0))
                                            for s in replaces) / mib, 1),
        "replace_snapshots_in_window": len(replaces)}))


if __name__ == "__main__":
    main()
