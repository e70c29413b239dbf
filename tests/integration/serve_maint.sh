#!/usr/bin/env bash
# Maintenance inside floe serve (issue 7 section 2): with cadences of seconds, while a
# client keeps posting events, serve's scheduler expires snapshots (manifest lists of
# expired snapshots deleted), rewrites manifests (a replace commit), removes a planted old
# orphan (and not a young one), and deletes committed landing files; /metrics counts the
# runs; nothing acknowledged is lost or doubled. Then: a lease held by another maintainer
# (a row in the catalog's floe_leases) makes serve skip that job - and only that job - until
# it is released; SIGHUP reloads the maintenance settings (cadence, run log; a bad one is
# refused); a SIGTERM during a job stops serve cleanly and leaves no lease of its own.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 30000 --seed 11 -o "$tmp/events.ndjson" >/dev/null
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
[defaults]
seal_bytes = 16KB
seal_age = 1s
compact_bytes = 1KB
compact_age = 1s
[table shop.events]
schema = $tmp/schema.json
partition = event_type
[maintain]
start-delay = 0s
tick = 200ms
lease-ttl = 30s
run-log = $tmp/runs.jsonl
expire.interval = 2s
expire.older-than = 1s
expire.retain-last = 2
rewrite-manifests.interval = 2s
rewrite-manifests.min-manifests = 3
orphans.interval = 2s
orphans.older-than = 1h
rewrite-data.interval = 3s
landing-lifecycle.interval = 2s
landing-lifecycle.age = 1s
CONF

# the serve configuration refuses what would be unsafe or a second landing compaction
bad() {
  printf '[server]\nlisten = 127.0.0.1:0\nwarehouse = %s/bad\n[maintain]\n%s\n' "$tmp" "$1" > "$tmp/bad.conf"
  local rc=0
  timeout 20 "$FLOE" serve --config "$tmp/bad.conf" --port-file "$tmp/badport" 2>"$tmp/bad.err" || rc=$?
  # 0: it ran and stopped; 124: it was still serving after 20 s - accepted either way
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "serve accepted '$1'"
  grep -q "$2" "$tmp/bad.err" || fail "'$1': $(cat "$tmp/bad.err")"
}
bad "orphans.older-than = 10m" "at least 1h"
bad "landing-compact.interval = 1m" "compactor"
bad "expire.retain-last = zero" "bad maintenance setting"

export FLOE_LOG=info # the scheduler logs every run at info level
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=default
unset FLOE_CONFIG

# post ONE batch file range [from, to) of 150-line batches, one every 0.1 s; acks to $2
cat > "$tmp/post.py" <<'PY'
import http.client, json, sys, time
port, events, first, last, out = int(open(sys.argv[1]).read()), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
lines = open(events, "rb").read().split(b"\n")[:-1]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
with open(out, "a") as log:
    for b in range(first, last):
        body = b"\n".join(lines[b * 150:(b + 1) * 150]) + b"\n"
        conn.request("POST", "/v1/tables/shop.events/events", body,
                     {"Content-Type": "application/x-ndjson"})
        r = conn.getresponse()
        data = r.read()
        if r.status != 200:
            sys.exit(f"batch {b}: HTTP {r.status} {data[:200]!r}")
        log.write(json.dumps({"batch": b, "response": json.loads(data)}) + "\n")
        time.sleep(0.1)
PY
metric() { # metric NAME_WITH_LABELS -> value (0 when absent)
  curl -sf "http://127.0.0.1:$port/metrics" | awk -v k="$1" '$1 == k {print $2; f=1} END {if (!f) print 0}'
}
runs() { metric "floe_maint_runs_total{table=\"shop.events\",job=\"$1\",result=\"$2\"}"; }
metadata() { # current metadata file of the table
  sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" "SELECT metadata_location FROM iceberg_tables WHERE table_namespace='shop' AND table_name='events'" | sed 's|^file://||'
}
snapshots() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("snapshots", [])))' "$(metadata)"; }

start_server --config "$tmp/serve.conf"
# first batch creates the table's first snapshot; then plant two orphans in its location
python3 "$tmp/post.py" "$tmp/port" "$tmp/events.ndjson" 0 1 "$tmp/acks.jsonl" || fail "post"
wait_for 60 '[ -n "$(metadata)" ]' || true
loc=$(dirname "$(dirname "$(metadata)")")
[ -d "$loc" ] || fail "table location not found"
mkdir -p "$loc/data"
echo old > "$loc/data/planted-orphan.parquet"
touch -d '2 days ago' "$loc/data/planted-orphan.parquet"
echo young > "$loc/data/young-orphan.parquet"

# ~15 s of posting while maintenance runs
python3 "$tmp/post.py" "$tmp/port" "$tmp/events.ndjson" 1 100 "$tmp/acks.jsonl" || fail "post"
sleep 3
curl -sf "http://127.0.0.1:$port/metrics" > "$tmp/metrics1.txt" || fail "metrics"
# every job ran at least twice and did its work at least once (a run finds nothing to do,
# and says "skipped", when expiry and rewrite-data already left fewer manifests than the
# rewrite threshold: that depends on timing)
for job in expire rewrite-manifests orphans landing-lifecycle; do
  n=$(runs "$job" ok) s=$(runs "$job" skipped)
  [ "$n" -ge 1 ] && [ $((n + s)) -ge 2 ] || fail "$job ran ok $n times, skipped $s (want ok >= 1, ok + skipped >= 2)"
  [ "$(runs "$job" failed)" = 0 ] || fail "$job failed: $(grep "maintain: shop.events $job: failed" "$tmp/server.log" | head -3)"
done
grep -q '^floe_maint_last_run_timestamp_seconds{table="shop.events",job="expire"} [1-9]' "$tmp/metrics1.txt" || fail "metrics: last run time"
deleted=$(metric 'floe_maint_files_deleted_total{job="expire"}')
[ "$deleted" -gt 0 ] || fail "expiry deleted no files"
commits=$(metric floe_commits_total)
# (a compaction round commits every due partition in one snapshot: about one a second)
[ "$commits" -ge 5 ] || fail "only $commits landing commits: the test needs many snapshots"
# the log says what ran
grep -Eq 'maintain: shop.events expire: ok: [1-9][0-9]* snapshots expired' "$tmp/server.log" || fail "log: no expiry"
grep -Eq 'maintain: shop.events rewrite-manifests: ok: manifests [0-9]+ -> [0-9]+' "$tmp/server.log" || fail "log: no manifest rewrite"

grep -q '"table":"shop.events","job":"orphans","owner":"[^"]*","start_ms":[0-9]*,"end_ms":[0-9]*,"result":"ok"' "$tmp/runs.jsonl" || fail "run log"
# on the table: expired snapshots and their manifest lists are gone, manifests merged
nsnap=$(snapshots)
[ "$nsnap" -lt "$commits" ] || fail "$nsnap snapshots for $commits commits: nothing expired"
nlists=$(ls "$loc/metadata" | grep -c '^snap-.*\.avro$' || true)
[ "$nlists" -le $((nsnap + 4)) ] || fail "$nlists manifest lists on disk for $nsnap snapshots"
# some manifest rewrite merged manifests (before -> after, fewer)
grep -Eo 'rewrite-manifests: ok: manifests [0-9]+ -> [0-9]+' "$tmp/server.log" |
  awk '$5 > $7 {m=1} END {exit !m}' || fail "no manifest rewrite reduced the manifest count"
[ ! -e "$loc/data/planted-orphan.parquet" ] || fail "the old orphan was not removed"
[ -e "$loc/data/young-orphan.parquet" ] || fail "the young orphan was removed"
n=$(sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" "SELECT COUNT(*) FROM landing_files WHERE state='deleted'")
[ "$n" -gt 0 ] || fail "landing lifecycle deleted no committed landing file"

# ---- a lease held elsewhere: serve skips that job and only that one
sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" "INSERT OR REPLACE INTO floe_leases VALUES ('default','shop','events','expire','other-maintainer:1', CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) + 600000)"
stop_server
start_server --config "$tmp/serve.conf"
before=$(snapshots)
python3 "$tmp/post.py" "$tmp/port" "$tmp/events.ndjson" 100 150 "$tmp/acks.jsonl" || fail "post"
sleep 2
busy=$(runs expire busy); ok=$(runs expire ok)
[ "$busy" -ge 2 ] || fail "expire skipped as busy $busy times (want >= 2)"
[ "$ok" = 0 ] || fail "expire ran ($ok) while another maintainer held its lease"
[ "$(runs orphans ok)" -ge 2 ] || fail "orphans did not run beside the busy lease"
after=$(snapshots)
[ "$after" -gt "$before" ] || fail "snapshots $before -> $after: expected growth without expiry"
grep -q 'maintain: shop.events expire: skipped: lease held by another maintainer' "$tmp/server.log" || fail "log: busy lease"
# released: expiry comes back
sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" "DELETE FROM floe_leases WHERE owner='other-maintainer:1'"
wait_for 60 '[ "$(runs expire ok)" -ge 1 ]' || fail "expire did not run after the lease was released"
final=$(snapshots)
[ "$final" -lt "$after" ] && [ "$final" -le 6 ] || fail "$final snapshots after expiry with retain-last 2 (had $after)"

# ---- SIGHUP reloads the maintenance settings: expire every hour (one run at start), then
# every 500 ms with a new run log; a bad setting keeps the settings in force
stop_server
sed -e 's/^expire.interval = 2s$/expire.interval = 1h/' "$tmp/serve.conf" > "$tmp/reload.conf"
start_server --config "$tmp/reload.conf"
wait_for 60 '[ "$(runs expire ok)" -ge 1 ]' || true
python3 "$tmp/post.py" "$tmp/port" "$tmp/events.ndjson" 150 160 "$tmp/acks.jsonl" || fail "post"
[ "$(runs expire ok)" = 1 ] || fail "expire ran $(runs expire ok) times with a 1h interval"
sed -i -e 's/^expire.interval = 1h$/expire.interval = 500ms/' \
  -e "s|^run-log = .*|run-log = $tmp/runs2.jsonl|" "$tmp/reload.conf"
kill -HUP "$pid"
wait_for 60 '[ "$(runs expire ok)" -ge 3 ]' || fail "expire ran $(runs expire ok) times after the reload to 500ms"
grep -q 'maintain: settings reloaded' "$tmp/server.log" || fail "log: no reload"
grep -q '"job":"expire"' "$tmp/runs2.jsonl" || fail "the reloaded run log has no expire run"
sed -i 's/^expire.interval = 500ms$/expire.interval = never/' "$tmp/reload.conf"
kill -HUP "$pid"
wait_for 60 'grep -q '\''reload failed'\'' "$tmp/server.log"' || true
grep -q 'reload failed, keeping the old settings: .*expire.interval' "$tmp/server.log" ||
  fail "a bad maintenance setting was not refused at reload"
n=$(runs expire ok)
wait_for 60 '[ "$(runs expire ok)" -gt "$n" ]' || fail "expire stopped after a refused reload"

# ---- SIGTERM while a job holds its lease: clean stop, no lease of ours left
sed -i 's/^tick = 200ms$/tick = 200ms\njob-delay = 3s/' "$tmp/serve.conf"
stop_server
start_server --config "$tmp/serve.conf"
for _ in $(seq 50); do
  n=$(sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" "SELECT COUNT(*) FROM floe_leases")
  [ "$n" -gt 0 ] && break; sleep 0.1
done
[ "$n" -gt 0 ] || fail "no lease taken with job-delay"
t0=$(date +%s)
stop_server
[ $(( $(date +%s) - t0 )) -le 20 ] || fail "stop took too long"
n=$(sqlite3 -cmd ".timeout 10000" "$tmp/wh/catalog.db" "SELECT COUNT(*) FROM floe_leases")
[ "$n" = 0 ] || fail "$n leases left after a clean stop"
grep -q 'maintain: shop.events [a-z-]*: ok' "$tmp/server.log" || fail "no job finished"

# everything posted into the table (and maintenance off: the content check below reads a
# table that nothing changes meanwhile)
sed -i -e '/^job-delay = 3s$/d' -e 's/^start-delay = 0s$/start-delay = 1h/' "$tmp/serve.conf"
start_server --config "$tmp/serve.conf"
flush_wait
stop_server

# ---- nothing acknowledged lost or doubled
python3 - "$tmp/events.ndjson" "$tmp/acks.jsonl" "$FLOE" <<'PY' || fail "table content"
import collections, json, subprocess, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
want = collections.Counter()
for l in open(sys.argv[2]):
    a = json.loads(l)
    assert a["response"]["accepted"] == 150 and a["response"]["rejected"] == 0, a
    for e in lines[a["batch"] * 150:(a["batch"] + 1) * 150]:
        want[json.loads(e)["event_id"]] += 1
out = subprocess.run([sys.argv[3], "scan", "shop.events", "--columns", "event_id"],
                     check=True, capture_output=True).stdout
got = collections.Counter(json.loads(r)["event_id"] for r in out.split(b"\n") if r)
if got != want:
    sys.exit(f"table: {sum(got.values())} rows, want {sum(want.values())}; missing "
             f"{sum((want - got).values())}, extra {sum((got - want).values())}")
print(f"table holds the {sum(want.values())} acknowledged events exactly once")
PY
echo "serve_maint: ok"
