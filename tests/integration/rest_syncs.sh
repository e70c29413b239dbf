#!/usr/bin/env bash
# rest_syncs.sh - what a commit through `floe catalog serve` on a SQLite catalog syncs,
# and in which order (strace of the server):
#
#  - the catalog database is in write-ahead-log mode after the server started;
#  - each commit syncs its new metadata file and the metadata folder (the new name),
#    then the catalog's log (catalog.db-wal): the file is durable before the catalog
#    points at it, and the swap is durable before the 200 (the sync of the log comes
#    before the answer is written to the socket);
#  - no more than 3 syncs per commit (a rollback journal took 6: the journal, its
#    folder, the journal header and the database on top of the metadata file's two).
#
# Skipped (77) without strace or python3.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v strace >/dev/null || { echo "rest_syncs: strace missing, skipped"; exit 77; }
command -v python3 >/dev/null || { echo "rest_syncs: python3 missing, skipped"; exit 77; }
command -v curl >/dev/null || { echo "rest_syncs: curl missing, skipped"; exit 77; }

tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "rest_syncs: FAIL: $*" >&2; exit 1; }

export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=syncs
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
printf '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}' \
  > "$tmp/schema.json"
"$floe" namespace create db >/dev/null
"$floe" table create db.t --schema "$tmp/schema.json" >/dev/null

# the server is strace's child: stop it (not strace) so it closes the catalog cleanly.
# LeakSanitizer cannot run under ptrace: leaks are the other tests' to find.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -y -qq -o "$tmp/trace" -e trace=fsync,fdatasync,sendto,sendmsg,write,writev \
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/server.log" &
spid=$!
for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || fail "the server did not start: $(cat "$tmp/server.log")"
base=http://127.0.0.1:$(cat "$tmp/port")
mode=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode").fetchone()[0])' "$tmp/catalog.db")
[ "$mode" = wal ] || fail "the catalog is in journal mode $mode, not wal"

n=20
for i in $(seq $n); do
  code=$(curl -H 'Content-Type: application/json' -s -o "$tmp/body" -w '%{http_code}' -X POST "$base/v1/namespaces/db/tables/t" \
    -d "{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"n\":\"$i\"}}]}")
  [ "$code" = 200 ] || fail "commit $i: $code $(cat "$tmp/body")"
done
kill -INT "$(pgrep -P "$spid")"
wait "$spid" || fail "the server did not stop cleanly: $(cat "$tmp/server.log")"
spid=

python3 - "$tmp/trace" "$n" <<'EOF' || fail "the syncs of a commit (above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
n = int(sys.argv[2])
syncs = [l for l in lines if re.search(r'\b(fsync|fdatasync)\(', l)]
wal = [i for i, l in enumerate(lines) if re.search(r'\b(fsync|fdatasync)\(\d+<[^>]*catalog\.db-wal>', l)]
if len(wal) < n:
    sys.exit(f"{len(wal)} syncs of catalog.db-wal for {n} commits")
# each commit: metadata file and folder synced, then the log, then the answer sent
answers = [i for i, l in enumerate(lines)
           if re.search(r'\b(write|writev|sendto|sendmsg)\(\d+<(TCP|socket)', l) and 'HTTP/1.1 200' in l]
if len(answers) < n:
    sys.exit(f"{len(answers)} answers seen for {n} commits")
prev = -1
counted = 0  # the syncs of commits 2..n (the first one's span holds the server's start)
for k, a in enumerate(answers):
    span = lines[prev + 1:a]
    meta = [l for l in span if re.search(r'\bfsync\(\d+<[^>]*\.metadata\.json[^>]*>', l)]
    folder = [l for l in span if re.search(r'\bfsync\(\d+<[^>]*/metadata>', l)]
    logs = [j for j, l in enumerate(span) if re.search(r'catalog\.db-wal>', l) and re.search(r'\b(fsync|fdatasync)\(', l)]
    if not meta or not folder or not logs:
        sys.exit(f"commit {k + 1}: metadata file synced {len(meta)}x, folder {len(folder)}x, log {len(logs)}x before the answer")
    first_meta = min(j for j, l in enumerate(span) if re.search(r'\bfsync\(\d+<[^>]*\.metadata\.json', l))
    if logs[-1] < first_meta:
        sys.exit(f"commit {k + 1}: the log was synced before the metadata file")
    if k:
        counted += sum(1 for l in span if re.search(r'\b(fsync|fdatasync)\(', l))
    prev = a
per = counted / (len(answers) - 1)
print(f"rest_syncs: {counted} syncs for commits 2..{len(answers)} ({per:.2f} per commit)")
if per > 3.5:
    sys.exit(f"{per:.2f} syncs per commit, expected at most 3")
EOF
echo "rest_syncs: ok"
