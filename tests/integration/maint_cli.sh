#!/usr/bin/env bash
# floe expire / orphans / rewrite-manifests / maintain end to end, with real Parquet data:
#  - after expiry every remaining snapshot scans to its summary's total-records;
#  - a writer appending in the background while expire and orphans run loses nothing;
#  - rewrite-manifests leaves the scan result identical;
#  - orphans deletes exactly the planted old files (dry run first), nothing referenced;
#  - two `floe maintain` processes never run one job of one table at the same time.
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
tmp=$(mktemp -d)
bgpid=""
trap '[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export FLOE_CATALOG_URI="sqlite:///$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh"
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true

echo '{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"string"},{"id":2,"name":"v","required":false,"type":"long"}]}' > "$tmp/s.json"
"$FLOE" namespace create ns >/dev/null
"$FLOE" table create ns.ev --schema "$tmp/s.json" --partition k >/dev/null
# floe's own tables clean their metadata as they go, unless told otherwise
"$FLOE" table describe ns.ev --json > "$tmp/desc.json"
python3 -c "import json,sys
p=json.load(open(sys.argv[1]))['properties']
assert p.get('write.metadata.delete-after-commit.enabled')=='true', p
assert p.get('write.metadata.previous-versions-max')=='10', p
assert p.get('commit.manifest.min-count-to-merge')=='8', p" "$tmp/desc.json" ||
  fail "table create defaults: $(cat "$tmp/desc.json")"
"$FLOE" table create ns.keep --schema "$tmp/s.json" \
  --property write.metadata.delete-after-commit.enabled=false >/dev/null
"$FLOE" table describe ns.keep --json | grep -q '"write.metadata.delete-after-commit.enabled":"false"' ||
  fail "table create --property does not override the default"

rows() { # N START -> N rows over partitions a, b, c
  python3 -c "import sys
n,s=int(sys.argv[1]),int(sys.argv[2])
for i in range(n): print('{\"k\":\"%s\",\"v\":%d}' % ('abc'[i%3], s+i))" "$1" "$2"
}
total=0
for i in $(seq 1 8); do
  rows $((i * 5)) $((i * 1000)) > "$tmp/in$i.ndjson"
  "$FLOE" append ns.ev "$tmp/in$i.ndjson" --no-merge --threads 0 >/dev/null
  total=$((total + i * 5))
done

# -- expiry while a writer appends ------------------------------------------------------
(
  for i in $(seq 1 6); do
    rows 7 $((100000 + i * 100)) > "$tmp/bg$i.ndjson"
    "$FLOE" append ns.ev "$tmp/bg$i.ndjson" >/dev/null || exit 1
  done
) &
bgpid=$!
runs=0
while kill -0 "$bgpid" 2>/dev/null || [ $runs -lt 2 ]; do
  "$FLOE" expire ns.ev --older-than 0s --retain-last 3 --json > "$tmp/exp.json" ||
    fail "expire failed during appends: $(cat "$tmp/exp.json")"
  "$FLOE" orphans ns.ev --older-than 1h --json > "$tmp/orph.json" || fail "orphans failed"
  runs=$((runs + 1))
done
wait "$bgpid" || fail "background appends failed"
bgpid=""
total=$((total + 42))
n=$("$FLOE" scan ns.ev | wc -l)
[ "$n" -eq "$total" ] || fail "after expiry during appends: $n rows, want $total"

# every remaining snapshot scans to its total-records
for i in 1 2; do
  rows 4 $((200000 + i * 100)) > "$tmp/more$i.ndjson"
  "$FLOE" append ns.ev "$tmp/more$i.ndjson" >/dev/null
done
total=$((total + 8))
"$FLOE" expire ns.ev --older-than 0s --retain-last 4 >/dev/null
"$FLOE" snapshots ns.ev --json > "$tmp/snaps.json"
nsnap=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$tmp/snaps.json")
[ "$nsnap" -eq 4 ] || fail "want 4 snapshots after --retain-last 4, have $nsnap"
python3 -c "import json,sys
for s in json.load(open(sys.argv[1])): print(s['snapshot_id'], s['summary']['total-records'])" \
  "$tmp/snaps.json" | while read -r id want; do
  got=$("$FLOE" scan ns.ev --snapshot "$id" | wc -l)
  [ "$got" -eq "$want" ] || fail "snapshot $id scans $got rows, summary says $want"
done
# the files the retained snapshots need exist (scan above read them all); dry run deletes
# nothing
before=$(find "$tmp/wh" -type f | wc -l)
"$FLOE" expire ns.ev --older-than 0s --retain-last 1 --dry-run --threads 0 --json > "$tmp/dry.json"
[ "$(find "$tmp/wh" -type f | wc -l)" -eq "$before" ] || fail "expire --dry-run deleted files"
grep -q '"snapshots_expired":3' "$tmp/dry.json" || fail "dry run: $(cat "$tmp/dry.json")"

# -- manifest rewrite keeps the scan identical ------------------------------------------
"$FLOE" scan ns.ev --format canonical | sort > "$tmp/scan1"
"$FLOE" rewrite-manifests ns.ev --json > "$tmp/rw.json"
grep -q '"manifests_after":1' "$tmp/rw.json" || fail "rewrite-manifests: $(cat "$tmp/rw.json")"
"$FLOE" scan ns.ev --format canonical | sort > "$tmp/scan2"
cmp -s "$tmp/scan1" "$tmp/scan2" || fail "scan changed after rewrite-manifests"
"$FLOE" snapshots ns.ev --json | grep -q '"operation":"replace"' || fail "no replace snapshot"

# -- orphans ------------------------------------------------------------------------------
root="$tmp/wh/ns/ev"
find "$root" -type f -exec touch -d '10 days ago' {} +
mkdir -p "$root/data/k=a" "$root/_landing" "$root/data/k=zz"
echo x > "$root/data/k=a/planted-1.parquet"
echo x > "$root/data/k=zz/planted-2.parquet"
echo x > "$root/metadata/planted-m0.avro"
echo x > "$root/data/k=a/young.parquet"
echo x > "$root/_landing/hidden.ndjson.zst"
touch -d '5 days ago' "$root/data/k=a/planted-1.parquet" "$root/data/k=zz/planted-2.parquet" \
  "$root/metadata/planted-m0.avro" "$root/_landing/hidden.ndjson.zst"
"$FLOE" orphans ns.ev --dry-run --list --threads 0 > "$tmp/odry"
[ "$(grep -c planted "$tmp/odry")" -eq 3 ] || fail "dry run lists: $(cat "$tmp/odry")"
[ -f "$root/data/k=a/planted-1.parquet" ] || fail "dry run deleted a file"
"$FLOE" orphans ns.ev --json > "$tmp/orph.json"
grep -q '"deleted":3' "$tmp/orph.json" || fail "orphans: $(cat "$tmp/orph.json")"
[ ! -e "$root/data/k=a/planted-1.parquet" ] && [ ! -e "$root/metadata/planted-m0.avro" ] ||
  fail "planted orphans remain"
[ -f "$root/data/k=a/young.parquet" ] || fail "young file deleted"
[ -f "$root/_landing/hidden.ndjson.zst" ] || fail "landing file deleted"
n=$("$FLOE" scan ns.ev | wc -l)
[ "$n" -eq "$total" ] || fail "after orphans: $n rows, want $total"

# -- usage -----------------------------------------------------------------------------------
set +e
"$FLOE" expire >/dev/null 2>&1; [ $? -eq 2 ] || fail "expire without table should exit 2"
"$FLOE" orphans ns.ev --prefix-mismatch maybe >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad mode should exit 2"
"$FLOE" expire ns.ev --threads 33 --dry-run >/dev/null 2>&1; [ $? -eq 2 ] || fail "--threads 33 should exit 2"
"$FLOE" orphans ns.ev --older-than 1m >/dev/null 2>&1; [ $? -eq 2 ] || fail "recent threshold needs --force"
"$FLOE" expire ns.nope >/dev/null 2>&1; [ $? -eq 1 ] || fail "unknown table should exit 1"
"$FLOE" expire "$root" >/dev/null 2>&1; [ $? -eq 1 ] || fail "expire of a path table must refuse"
set -e
"$FLOE" expire "$root" --dry-run >/dev/null || fail "expire --dry-run on a path table"

# -- two maintainers -------------------------------------------------------------------------
cat > "$tmp/maint.conf" <<EOF
[defaults]
expire.older-than = 0s
expire.retain-last = 2
rewrite-manifests.min-manifests = 1
EOF
for round in 1 2 3; do
  "$FLOE" maintain ns.ev --once --schedule "$tmp/maint.conf" --job-delay 150ms \
    --run-log "$tmp/runs.log" > /dev/null 2>&1 &
  p1=$!
  "$FLOE" maintain ns.ev --once --schedule "$tmp/maint.conf" --job-delay 150ms \
    --run-log "$tmp/runs.log" > /dev/null 2>&1 &
  p2=$!
  wait $p1 || fail "maintainer 1 failed"
  wait $p2 || fail "maintainer 2 failed"
done
python3 - "$tmp/runs.log" <<'PY' || fail "maintainers overlapped"
import json, sys, collections
runs = [json.loads(l) for l in open(sys.argv[1])]
held = collections.defaultdict(list)
busy = 0
for r in runs:
    if r["result"] == "busy":
        busy += 1
    else:
        held[(r["table"], r["job"])].append((r["start_ms"], r["end_ms"], r["owner"]))
for key, iv in held.items():
    iv.sort()
    for a, b in zip(iv, iv[1:]):
        if b[0] < a[1]:
            print("overlap", key, a, b); sys.exit(1)
owners = {r["owner"] for r in runs}
assert len(owners) == 6, owners
assert busy > 0, "the maintainers never met: the test proves nothing"
assert len(runs) == 6 * 7, len(runs)  # 7 jobs
print("maintain: %d runs, %d busy, no overlap" % (len(runs), busy))
PY
n=$("$FLOE" scan ns.ev | wc -l)
[ "$n" -eq "$total" ] || fail "after maintain: $n rows, want $total"
# --json: a failure is also a JSON object on standard output (code, exit, message)
set +e
"$FLOE" expire ns.missing --json > "$tmp/err.json" 2> /dev/null; rc1=$?
"$FLOE" rewrite ns.ev --json --option no-such-option=1 > "$tmp/usage.json" 2> /dev/null; rc2=$?
set -e
[ $rc1 -eq 1 ] && [ $rc2 -eq 2 ] || fail "--json failures exited $rc1 / $rc2 (want 1 / 2)"
python3 - "$tmp/err.json" "$tmp/usage.json" <<'PY' || fail "--json errors: $(cat "$tmp/err.json" "$tmp/usage.json")"
import json, sys
a = json.load(open(sys.argv[1]))["error"]
b = json.load(open(sys.argv[2]))["error"]
assert a["code"] == "NOTFOUND" and a["exit"] == 1 and "ns.missing" in a["message"], a
assert b["code"] == "USAGE" and b["exit"] == 2 and "no-such-option" in b["message"], b
PY
echo "maint_cli: ok"
