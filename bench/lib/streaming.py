#!/usr/bin/env python3
"""bench/lib/streaming.py - the driver of bench/streaming (see there).

Writer: every INTERVAL s one batch of generated events (floe gen; event time advancing
so that the run covers 24 hours), appended to bench.gen and bench.none (floe append, both
at once) and posted to floe serve. Sampler: every 30 s, per table, the figures of the
report. At the end: rows exact, the maintenance runs' outcomes, report.md in --work.
"""
import argparse
import http.client
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

DAY_S = 86400
T0_EVENT = 1791244800  # 2026-10-06T00:00:00Z
SAMPLE_S = 30
STEADY_FROM = 1 / 3  # steady state: the last two thirds of the run


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--floe", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--interval", type=float, default=2)
    p.add_argument("--events", type=int, default=2016)
    p.add_argument("--serve", type=int, default=1)
    p.add_argument("--gen-options", default=None)
    return p.parse_args()


class Pipeline:
    """One table and what is known about it."""

    def __init__(self, name, env, db, table):
        self.name, self.env, self.db, self.table = name, env, db, table
        self.seen = set()          # snapshot ids already counted
        self.appended = 0          # added-files-size of the writers' snapshots
        self.rewritten = 0         # added-files-size of replace snapshots
        self.writer_snapshots = 0
        self.rewrite_snapshots = 0
        self.samples = []
        self.expected_rows = 0
        self.failures = []         # writer failures

    def metadata_location(self):
        if not os.path.exists(self.db):
            return None
        con = sqlite3.connect(self.db, timeout=30)
        try:
            ns, name = self.table.split(".")
            row = con.execute("SELECT metadata_location FROM iceberg_tables WHERE "
                              "table_namespace=? AND table_name=?", (ns, name)).fetchone()
        except sqlite3.Error:
            row = None
        finally:
            con.close()
        return row[0].replace("file://", "") if row else None

    def read_metadata(self):
        for _ in range(5):  # the file may go between reading the pointer and the file
            loc = self.metadata_location()
            if not loc:
                return None
            try:
                with open(loc) as f:
                    return json.load(f)
            except (OSError, ValueError):
                time.sleep(0.05)
        return None

    def count_snapshots(self, md):
        for s in md.get("snapshots", []):
            sid = s["snapshot-id"]
            if sid in self.seen:
                continue
            self.seen.add(sid)
            summ = s.get("summary", {})
            added = int(summ.get("added-files-size", 0) or 0)
            if summ.get("operation") == "replace":
                self.rewritten += added
                self.rewrite_snapshots += 1 if added else 0
            else:
                self.appended += added
                self.writer_snapshots += 1


def run(cmd, env, **kw):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)


def disk_usage(location):
    data = meta = 0
    data_files = meta_files = 0
    md = os.path.join(location, "metadata")
    for root, _, files in os.walk(location):
        for f in files:
            try:
                n = os.path.getsize(os.path.join(root, f))
            except OSError:
                continue
            if root == md or root.startswith(md + os.sep):
                meta += n
                meta_files += 1
            else:
                data += n
                data_files += 1
    return data, data_files, meta, meta_files


def sample(floe, p, t_rel, event_day):
    md = p.read_metadata()
    if md is None:
        return
    p.count_snapshots(md)
    cur = next((s for s in md.get("snapshots", [])
                if s["snapshot-id"] == md.get("current-snapshot-id")), None)
    live = int(cur["summary"].get("total-files-size", 0)) if cur else 0
    live_files = int(cur["summary"].get("total-data-files", 0)) if cur else 0
    loc = md["location"].replace("file://", "")
    data, data_files, meta, meta_files = disk_usage(loc)
    h = run([floe, "health", p.table, "--json", "--runs", "5", "--no-listing"], p.env)
    hot = point_manifests = point_ms = point_min_ms = None
    snapshots = len(md.get("snapshots", []))
    if h.returncode == 0:
        j = json.loads(h.stdout)
        c = j["current"]
        parts = [x for x in c.get("partitions", []) if event_day in x.get("path", "")]
        if parts:
            hot = max(x["files"]["data_files"] for x in parts)
        point_manifests = c["requests"]["point_query"]["manifests_read"]
        point_ms = c["planning"].get("point_query_ms")
        point_min_ms = c["planning"].get("point_query_min_ms")
    p.samples.append({
        "t": t_rel, "appended": p.appended, "rewritten": p.rewritten, "live": live,
        "live_files": live_files, "disk_data": data, "disk_files": data_files,
        "meta": meta, "meta_files": meta_files, "hot_files": hot,
        "point_manifests": point_manifests, "point_ms": point_ms, "point_min_ms": point_min_ms,
        "snapshots": snapshots,
    })


def gen_batch(floe, k, n_commits, events, path):
    step = DAY_S / n_commits
    start = T0_EVENT + int(k * step)
    rate = max(1, round(events / step))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))
    r = subprocess.run([floe, "gen", "--seed", str(k + 1), "--count", str(events), "--rate",
                        str(rate), "--start", stamp, "--partitions", "8", "-o", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"floe gen failed: {r.stderr}")


def post(port, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        for attempt in range(60):
            conn.request("POST", "/v1/tables/bench.serve/events", body,
                         {"Content-Type": "application/x-ndjson"})
            r = conn.getresponse()
            data = r.read()
            if r.status == 200:
                return json.loads(data)["accepted"], None
            if r.status in (429, 503):
                time.sleep(float(r.getheader("Retry-After") or 1))
                continue
            return 0, f"HTTP {r.status} {data[:200]!r}"
        return 0, "still refused after 60 tries"
    except (OSError, http.client.HTTPException) as e:
        return 0, str(e)
    finally:
        conn.close()


def runs_summary(path):
    out = {"runs": 0, "ok": 0, "failed": 0, "busy": 0, "skipped": 0, "files_read": 0,
           "bytes_read": 0, "files_written": 0, "bytes_written": 0, "commits": 0,
           "attempts": 0, "conflicts": 0, "max_attempts": 0, "groups_failed_runs": 0,
           "files_deleted": 0, "by_job": {}}
    if not os.path.exists(path):
        return out
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        j = out["by_job"].setdefault(r["job"], {"ok": 0, "failed": 0, "skipped": 0, "busy": 0,
                                                "commits": 0, "attempts": 0, "conflicts": 0,
                                                "max_attempts": 0, "bytes_read": 0,
                                                "bytes_written": 0, "files_read": 0,
                                                "files_written": 0, "files_deleted": 0,
                                                "failures": []})
        j[r["result"]] = j.get(r["result"], 0) + 1
        for k in ("commits", "attempts", "conflicts", "bytes_read", "bytes_written",
                  "files_read", "files_written", "files_deleted"):
            j[k] += r.get(k, 0)
        j["max_attempts"] = max(j["max_attempts"], r.get("attempts", 0))
        if r["result"] == "failed" and len(j["failures"]) < 3:
            j["failures"].append(r.get("detail", ""))
        if r["job"] == "rewrite-data" and " 0 failed" not in r.get("detail", " 0 failed"):
            j.setdefault("runs_with_failed_groups", 0)
            j["runs_with_failed_groups"] = j.get("runs_with_failed_groups", 0) + 1
    return out


def scan_ids(floe, p):
    r = run([floe, "scan", p.table, "--columns", "event_id"], p.env)
    if r.returncode != 0:
        return None, None, r.stderr.strip()
    ids = r.stdout.split("\n")
    ids = [x for x in ids if x]
    return len(ids), len(set(ids)), None


def fmt_mb(n):
    return f"{n / 1048576:.1f}"


def ratio(a, b):
    return a / b if b else None


def f2(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def main():
    a = parse_args()
    floe, work = a.floe, a.work
    os.makedirs(work, exist_ok=True)
    batches = os.path.join(work, "batches")
    os.makedirs(batches, exist_ok=True)
    n_commits = int(a.minutes * 60 / a.interval)
    procs = []

    # ---- tables and maintainers ------------------------------------------------------
    wh = os.path.join(work, "wh-append")
    env = dict(os.environ, FLOE_CATALOG_URI=f"sqlite:///{wh}/catalog.db", FLOE_WAREHOUSE=wh,
               FLOE_LOG="info")
    for k in ("FLOE_CONFIG", "FLOE_CATALOG", "FLOE_CATALOG_TYPE"):
        env.pop(k, None)
    os.makedirs(wh, exist_ok=True)
    schema = os.path.join(work, "schema.json")
    subprocess.run([floe, "gen", "--schema-out", schema], check=True, capture_output=True)
    subprocess.run([floe, "namespace", "create", "bench"], env=env, check=True,
                   capture_output=True)
    tables = ["bench.gen", "bench.none"] + (["bench.opts"] if a.gen_options else [])
    for t in tables:
        subprocess.run([floe, "table", "create", t, "--schema", schema, "--partition",
                        "event_type, day(ts)"], env=env, check=True, capture_output=True)
    with open(os.path.join(work, "none.conf"), "w") as f:
        f.write("[defaults]\nrewrite-data.enabled = false\n")
    db = os.path.join(wh, "catalog.db")
    gen = Pipeline("gen", env, db, "bench.gen")
    none = Pipeline("none", env, db, "bench.none")
    pipes = [gen, none]
    maintainers = [(gen, []), (none, ["--schedule", os.path.join(work, "none.conf")])]
    if a.gen_options:
        with open(os.path.join(work, "opts.conf"), "w") as f:
            f.write(f"[defaults]\nrewrite-data.options = {a.gen_options}\n")
        opts = Pipeline("opts", env, db, "bench.opts")
        pipes.append(opts)
        maintainers.append((opts, ["--schedule", os.path.join(work, "opts.conf")]))
    appended_to = list(pipes)
    for p, extra in maintainers:
        log = open(os.path.join(work, f"maintain-{p.name}.log"), "w")
        procs.append(subprocess.Popen(
            [floe, "maintain", p.table, "--run-log", os.path.join(work, f"{p.name}.runs.jsonl")]
            + extra, env=env, stdout=log, stderr=subprocess.STDOUT))

    port = None
    serve = None
    if a.serve:
        swh = os.path.join(work, "wh-serve")
        conf = os.path.join(work, "serve.conf")
        with open(conf, "w") as f:
            f.write(f"[server]\nlisten = 127.0.0.1:0\nwarehouse = {swh}\n"
                    f"[table bench.serve]\nschema = {schema}\npartition = event_type, day(ts)\n"
                    f"[maintain]\nrun-log = {work}/serve.runs.jsonl\n")
        senv = dict(env, FLOE_CATALOG_URI=f"sqlite:///{swh}/catalog.db", FLOE_WAREHOUSE=swh)
        portf = os.path.join(work, "port")
        slog = open(os.path.join(work, "serve.log"), "w")
        sp = subprocess.Popen([floe, "serve", "--config", conf, "--port-file", portf],
                              env=senv, stdout=slog, stderr=subprocess.STDOUT)
        procs.append(sp)
        for _ in range(400):
            if os.path.exists(portf) and os.path.getsize(portf) > 0:
                port = int(open(portf).read())
                break
            time.sleep(0.05)
        if port is None:
            raise SystemExit("floe serve did not start")
        serve = Pipeline("serve", senv, os.path.join(swh, "catalog.db"), "bench.serve")
        pipes.append(serve)

    # ---- writer and sampler ------------------------------------------------------------
    stop = threading.Event()
    t_start = time.time()
    append_ms = []
    acked = [0]

    def sampler():
        nxt = t_start + SAMPLE_S
        while not stop.is_set():
            if stop.wait(max(0, nxt - time.time())):
                break
            nxt += SAMPLE_S
            t_rel = time.time() - t_start
            k = min(n_commits - 1, int(t_rel / a.interval))
            day = time.strftime("%Y-%m-%d", time.gmtime(T0_EVENT + k * DAY_S / n_commits))
            for p in pipes:
                sample(floe, p, t_rel, day)
            with open(os.path.join(work, "samples.json"), "w") as f:
                json.dump({p.name: p.samples for p in pipes}, f)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    for k in range(n_commits):
        due = t_start + k * a.interval
        if time.time() < due:
            time.sleep(due - time.time())
        path = os.path.join(batches, f"b{k}.ndjson")
        gen_batch(floe, k, n_commits, a.events, path)
        t0 = time.time()
        ap = [subprocess.Popen([floe, "append", p.table, path, "--json"], env=p.env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for p in appended_to]
        if serve is not None:
            with open(path, "rb") as f:
                n, why = post(port, f.read())
            if why:
                serve.failures.append(f"batch {k}: {why}")
            acked[0] += n
        for p, pr in zip(appended_to, ap):
            out, errt = pr.communicate()
            if pr.returncode == 0:
                p.expected_rows += json.loads(out)["added_records"]
            else:
                p.failures.append(f"batch {k}: {errt.strip()[:200]}")
        append_ms.append((time.time() - t0) * 1000)
        os.unlink(path)
    t_writer = time.time() - t_start
    stop.set()
    th.join()
    day = time.strftime("%Y-%m-%d", time.gmtime(T0_EVENT + (n_commits - 1) * DAY_S / n_commits))
    for p in pipes:
        sample(floe, p, time.time() - t_start, day)

    # ---- stop and check ----------------------------------------------------------------
    if serve is not None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        conn.request("POST", "/v1/admin/flush?compact=1")
        r = conn.getresponse()
        r.read()
        serve.expected_rows = acked[0]
        if r.status != 200:
            serve.failures.append(f"flush: HTTP {r.status}")
    for pr in procs:
        pr.send_signal(signal.SIGTERM)
    for pr in procs:
        try:
            pr.wait(timeout=300)
        except subprocess.TimeoutExpired:
            pr.kill()
    rows = {}
    for p in pipes:
        rows[p.name] = scan_ids(floe, p)

    # ---- report ------------------------------------------------------------------------
    runs = {p.name: runs_summary(os.path.join(work, f"{p.name}.runs.jsonl")) for p in pipes}
    steady_t = a.minutes * 60 * STEADY_FROM
    lines = []
    L = lines.append
    per_commit = gen.appended / max(1, gen.writer_snapshots)
    L(f"A writer commits a batch of {a.events} generated events every {a.interval:g} s for "
      f"{a.minutes:g} minutes ({n_commits} commits, ~{per_commit / 1024:.0f} KB of Parquet "
      f"in ~8 files each), its event time running 24 hours over the run, into tables "
      f"partitioned by `event_type, day(ts)` (8 event types). Beside each other on the same "
      f"batches: **gen**, `floe maintain bench.gen` with no configuration (every default: "
      f"the generational planner and cadences that follow the commit rate); **none**, the "
      f"same with `rewrite-data.enabled = false` (no compaction)"
      + (f"; **opts**, the same as gen with `rewrite-data.options = {a.gen_options}`"
         if a.gen_options else "")
      + ("; **serve**, the batches posted to `floe serve` (landing compaction, built-in "
         "maintenance as configured by default, its 5-minute start delay included)."
         if serve else "."))
    L("Sampled every 30 s; steady state = the last two thirds of the run "
      f"(from minute {steady_t / 60:.0f}). The writer's {len(appended_to)} appends "
      f"took {statistics.median(append_ms):.0f} ms (median, all at once) per commit, "
      f"{max(append_ms):.0f} ms at most; its commits ran {t_writer / 60:.1f} minutes.")
    L("")

    def steady(p, key):
        v = [s[key] for s in p.samples if s["t"] >= steady_t and s[key] is not None]
        return v

    def amp(p, s):
        return ratio(s["disk_data"], s["live"])

    def metric_rows():
        out = []
        for p in pipes:
            last = p.samples[-1] if p.samples else None
            wa = ratio(p.rewritten, p.appended)
            st_amp = [amp(p, s) for s in p.samples if s["t"] >= steady_t and s["live"]]
            hot = steady(p, "hot_files")
            pm = steady(p, "point_manifests")
            pms = steady(p, "point_ms")
            pmin = steady(p, "point_min_ms")
            meta = [s["meta"] for s in p.samples]
            out.append((p, wa, st_amp, hot, pm, pms, meta, last, pmin))
        return out

    L("| figure | target | " + " | ".join(p.name for p in pipes) + " |")
    L("|---|---|" + "---|" * len(pipes))
    rows_m = metric_rows()

    def cell(vals):
        return " | ".join(vals)

    L("| bytes rewritten / bytes appended, whole run | <= 3x | " +
      cell([f2(r[1]) + "x" if r[1] is not None else "-" for r in rows_m]) + " |")
    L("| bytes on disk / live, steady state: max (mean) | <= 2x | " +
      cell([(f"{max(r[2]):.2f}x ({statistics.mean(r[2]):.2f}x)" if r[2] else "-")
            for r in rows_m]) + " |")
    L("| bytes on disk / live at the end | | " +
      cell([f2(amp(r[0], r[7])) + "x" if r[7] and r[7]["live"] else "-" for r in rows_m]) + " |")
    L("| live files in the hot partition, steady state: max (mean) | <= 8 | " +
      cell([(f"{max(r[3])} ({statistics.mean(r[3]):.1f})" if r[3] else "-") for r in rows_m]) + " |")
    L("| metadata folder, max | <= 100 MB | " +
      cell([(fmt_mb(max(r[6])) + " MB" if r[6] else "-") for r in rows_m]) + " |")
    L("| manifests read by a point query, steady state: max | <= 10 | " +
      cell([(str(max(r[4])) if r[4] else "-") for r in rows_m]) + " |")
    L("| point-query planning, steady state: median (max) of the medians of 5 | <= 10 ms | " +
      cell([(f"{statistics.median(r[5]):.1f} ms ({max(r[5]):.1f})" if r[5] else "-")
            for r in rows_m]) + " |")
    L("| point-query planning, steady state: median (max) of the fastest of 5 | <= 10 ms | " +
      cell([(f"{statistics.median(r[8]):.1f} ms ({max(r[8]):.1f})" if r[8] else "-")
            for r in rows_m]) + " |")
    L("| writer failures | 0 | " + cell([str(len(p.failures)) for p in pipes]) + " |")
    rw_cells = []
    for p in pipes:
        j = runs[p.name]["by_job"].get("rewrite-data")
        if not j:
            rw_cells.append("-")
            continue
        rw_cells.append(f"{j.get('failed', 0)} failed of {j.get('ok', 0) + j.get('failed', 0)}, "
                        f"{j.get('runs_with_failed_groups', 0)} with failed groups")
    L("| rewrite runs lost (failed, or groups failed) | 0 | " + cell(rw_cells) + " |")
    rc_cells = []
    ok_all = True
    for p in pipes:
        n, d, e = rows[p.name]
        good = e is None and n == d == p.expected_rows
        ok_all &= good
        rc_cells.append(f"{n} rows, {d} distinct, {p.expected_rows} expected" if e is None
                        else f"scan failed: {e[:80]}")
    L("| rows exact | every event once | " + cell(rc_cells) + " |")
    L("")
    # what maintenance did
    L("Maintenance runs (run logs):")
    L("")
    L("| pipeline | job | ok | failed | busy | commits | attempts (max per run) | conflicts | "
      "read | written | deleted files |")
    L("|---|---|---|---|---|---|---|---|---|---|---|")
    for p in pipes:
        for job, j in sorted(runs[p.name]["by_job"].items()):
            L(f"| {p.name} | {job} | {j.get('ok', 0)} | {j.get('failed', 0)} | {j.get('busy', 0)} "
              f"| {j['commits']} | {j['attempts']} ({j['max_attempts']}) | {j['conflicts']} | "
              f"{fmt_mb(j['bytes_read'])} MB | {fmt_mb(j['bytes_written'])} MB | "
              f"{j['files_deleted']} |")
            for fl in j["failures"]:
                L(f"|  | failure: {fl[:160]} | | | | | | | | | |")
    L("")
    for p in pipes:
        if p.failures:
            L(f"{p.name} writer failures (first 3): " + "; ".join(p.failures[:3]))
    L("")
    L("Over time (every ~3 minutes; W = bytes rewritten / appended so far; disk/live; hot = "
      "live files in the hot partition; mf = manifests a point query reads; ms = its planning "
      "time; meta = metadata folder):")
    L("")
    hdr = "| min | appended MB |"
    for p in pipes:
        hdr += f" {p.name} W | {p.name} disk/live | {p.name} hot | {p.name} mf | {p.name} ms | {p.name} meta MB |"
    L(hdr)
    L("|---|---|" + "---|---|---|---|---|---|" * len(pipes))
    n = min(len(p.samples) for p in pipes)
    idx = sorted(set(list(range(0, n, 6)) + [n - 1])) if n else []
    for i in idx:
        s0 = gen.samples[i]
        row = f"| {s0['t'] / 60:.1f} | {fmt_mb(s0['appended'])} |"
        for p in pipes:
            s = p.samples[i]
            row += (f" {f2(ratio(s['rewritten'], s['appended']))} | {f2(amp(p, s))} | "
                    f"{s['hot_files'] if s['hot_files'] is not None else '-'} | "
                    f"{s['point_manifests'] if s['point_manifests'] is not None else '-'} | "
                    f"{f2(s['point_ms'], 1)} | {fmt_mb(s['meta'])} |")
        L(row)
    with open(os.path.join(work, "report.md"), "w") as f:
        f.write("\n".join(lines).lstrip("\n") + "\n")
    with open(os.path.join(work, "samples.json"), "w") as f:
        json.dump({p.name: p.samples for p in pipes}, f)
    bad = any(p.failures for p in pipes) or not ok_all
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
