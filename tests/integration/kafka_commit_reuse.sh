#!/usr/bin/env bash
# Kafka source: commits one after another in one process hold exactly their own rows. A
# server with [source kafka] keeps the memory a commit's conversion freed for the next
# commit (floe_server_tune_malloc_kafka), so a buffer read before it is written would show
# the last commit's bytes. One consumer takes three batches, each committed before the
# next is produced, into a table partitioned by event_type:
#   1. 1,500 generated events (every field set, 8 partitions);
#   2. 600 events of 2 partitions, one of them new: optional fields absent or null, empty
#      lists, empty strings, structs with only some fields, no payload;
#   3. 400 events of another partition with payloads of 2,000-6,000 characters and tags
#      lists of 6 elements.
# Every row of the table equals the row `floe convert` writes for its event in a process
# of its own (floe cat of that file), all columns, compared exactly; each commit's data
# files hold only that commit's events; and the server said it keeps the memory (glibc's
# malloc; a sanitized build has its own allocator).
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 3000 --seed 31 -o "$tmp/gen.ndjson" >/dev/null
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
ev = [json.loads(l) for l in open(f"{d}/gen.ndjson")]
b1 = ev[:1500]
b2 = []
for i, e in enumerate(ev[1500:2100]):
    e = dict(e)
    e["event_type"] = "sparse" if i % 2 else "click"
    for k in ("session_id", "amount", "currency", "payload", "is_bot", "consent"):
        if i % 3 == 0:
            e.pop(k, None)
        elif i % 3 == 1:
            e[k] = None
    e["tags"] = [] if i % 4 else None
    e["device"] = {"os": ""} if i % 5 else None
    e["geo"] = {"city": "", "lat": None} if i % 2 else {}
    b2.append(e)
b3 = []
for i, e in enumerate(ev[2100:2500]):
    e = dict(e)
    e["event_type"] = "long"
    e["payload"] = ("x%04d-" % i) * (330 + (i * 37) % 670)
    e["tags"] = ["t%d-%s" % (j, "y" * (i % 50)) for j in range(6)]
    b3.append(e)
for n, b in (("1", b1), ("2", b2), ("3", b3)):
    with open(f"{d}/b{n}.ndjson", "w") as f:
        for e in b:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
PY
for n in 1 2 3; do # the oracle: each batch converted alone, in a process of its own
  "$FLOE" convert -s "$tmp/schema.json" -o "$tmp/ref$n" "$tmp/b$n.ndjson" >/dev/null ||
    fail "convert b$n"
  "$FLOE" cat "$tmp/ref$n/part-00000.parquet" > "$tmp/ref$n.rows" || fail "cat b$n"
done
mock_start 3
mock topic events 3
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.ev partition=event_type)
$(source_section ev events reuse shop.ev commit_interval=1s kafka.session.timeout.ms=6000 \
    kafka.heartbeat.interval.ms=500)
CONF
node_start a "$tmp/a.conf"
total=0
for n in 1 2 3; do
  mock produce events "$tmp/b$n.ndjson" lz4
  total=$((total + $(wc -l < "$tmp/b$n.ndjson")))
  wait_rows shop.ev "$total" 120
  find "$tmp/wh" -name '*.parquet' | sort > "$tmp/files$n"
done
sleep 2 # anything committed twice would show up now
node_stop a
# (a sanitized build has the sanitizer's allocator: nothing to keep, nothing said)
# (whole outputs first: grep -q stopping early would fail the pipe under pipefail)
libs=$(ldd "$FLOE" 2>/dev/null || true)
syms=$(nm "$FLOE" 2>/dev/null || true)
if ! grep -q 'lib[at]san' <<<"$libs" && ! grep -q '__[at]san_init' <<<"$syms"; then
  grep -q "keeps the memory a commit frees" "$tmp/node-a.log" ||
    fail "the server did not say it keeps the memory commits free"
fi
# the rows each commit added, from its own data files
prev=/dev/null
for n in 1 2 3; do
  : > "$tmp/got$n.rows"
  for f in $(comm -13 "$prev" "$tmp/files$n"); do
    "$FLOE" cat "$f" >> "$tmp/got$n.rows" || fail "cat $f"
  done
  prev=$tmp/files$n
done
FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" "$FLOE" scan shop.ev \
  > "$tmp/scan.rows" || fail "scan"
python3 - "$tmp" <<'PY' || fail "rows differ"
import json, sys
d = sys.argv[1]
def rows(p):
    return [json.loads(l) for l in open(p) if l.strip()]
canon = lambda r: json.dumps(r, sort_keys=True)
problems = []
allref = []
for n in "123":
    ref = rows(f"{d}/ref{n}.rows")
    got = rows(f"{d}/got{n}.rows")
    allref += ref
    want = {r["event_id"]: canon(r) for r in ref}
    seen = set()
    for r in got:
        i = r["event_id"]
        if i not in want:
            problems.append(f"commit {n}: a row not of its batch: {canon(r)[:200]}")
        elif canon(r) != want[i]:
            problems.append(f"commit {n}: row {i} differs:\n  got  {canon(r)[:400]}\n"
                            f"  want {want[i][:400]}")
        if i in seen:
            problems.append(f"commit {n}: row {i} twice")
        seen.add(i)
    if len(got) != len(ref) or seen != set(want):
        problems.append(f"commit {n}: {len(got)} rows in its files, want {len(ref)}")
scan = rows(f"{d}/scan.rows")
if sorted(map(canon, scan)) != sorted(map(canon, allref)):
    problems.append(f"the table's {len(scan)} rows are not the {len(allref)} events")
print(f"kafka_commit_reuse: {len(scan)} rows in 3 commits")
for p in problems[:8]:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
echo "kafka_commit_reuse: ok"
