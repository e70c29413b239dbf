#!/usr/bin/env bash
# progress_tty.sh - the progress line of floe convert, append and rewrite: on a
# pseudo-terminal standard error shows "floe CMD: <bytes> of <total> (<n>%), <rate>/s"
# redrawn in place (\r), with the result on standard output; with standard error not a
# terminal, or with --quiet (or --json) on one, standard error stays empty. Each --help
# documents --quiet.
set -euo pipefail
name=progress_tty oracle=@duckdb/node-api
. "$(dirname "$0")/lib/table_cli_common.sh"

# run ARGS... on a pseudo-terminal (stderr and stdin), stdout to $tmp/out: prints what the
# terminal received
cat > "$tmp/on_tty.py" <<'PY'
import os, pty, subprocess, sys
m, s = pty.openpty()
with open(sys.argv[1], "wb") as out:
    p = subprocess.Popen(sys.argv[2:], stdin=s, stdout=out, stderr=s)
os.close(s)
got = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    got += d
rc = p.wait()
sys.stdout.buffer.write(got)
sys.exit(rc)
PY
on_tty() { python3 "$tmp/on_tty.py" "$tmp/out" "$@"; }

python3 -c '
for j in range(200000): print("{\"k\":\"key-%d\",\"v\":%d}" % (j % 977, j))' > "$tmp/in.ndjson"
size=$(stat -c %s "$tmp/in.ndjson")

for cmd in convert append rewrite; do
  "$floe" $cmd --help | grep -q -- '--quiet' || fail "floe $cmd --help does not document --quiet"
done

# convert
on_tty "$floe" convert --schema "$tmp/s.json" -o "$tmp/c1" "$tmp/in.ndjson" > "$tmp/tty.txt" || fail "convert on a tty failed"
grep -aq $'\rfloe convert: .* of .* (100%), .*/s' "$tmp/tty.txt" || fail "convert on a tty: no progress line in $(od -c "$tmp/tty.txt" | head -5)"
grep -q 'records' "$tmp/out" || fail "convert on a tty: the result is not on stdout"
"$floe" convert --schema "$tmp/s.json" -o "$tmp/c2" "$tmp/in.ndjson" > "$tmp/out" 2> "$tmp/err"
[ ! -s "$tmp/err" ] || fail "convert without a tty wrote to stderr: $(cat "$tmp/err")"
on_tty "$floe" convert --schema "$tmp/s.json" -o "$tmp/c3" "$tmp/in.ndjson" --quiet > "$tmp/tty.txt"
[ ! -s "$tmp/tty.txt" ] || fail "convert --quiet on a tty drew: $(cat -v "$tmp/tty.txt")"
on_tty "$floe" convert --schema "$tmp/s.json" -o "$tmp/c4" "$tmp/in.ndjson" --json > "$tmp/tty.txt"
[ ! -s "$tmp/tty.txt" ] || fail "convert --json on a tty drew: $(cat -v "$tmp/tty.txt")"

# append (NDJSON converted, and a Parquet file)
"$floe" table create ns.p --schema "$tmp/s.json" >/dev/null
on_tty "$floe" append ns.p "$tmp/in.ndjson" > "$tmp/tty.txt" || fail "append on a tty failed"
grep -aq $'\rfloe append: .* of .* (100%), .*/s' "$tmp/tty.txt" || fail "append on a tty: no progress line: $(cat -v "$tmp/tty.txt")"
grep -q '^snapshot ' "$tmp/out" || fail "append on a tty: the result is not on stdout"
"$floe" append ns.p "$tmp/in.ndjson" > "$tmp/out" 2> "$tmp/err"
[ ! -s "$tmp/err" ] || fail "append without a tty wrote to stderr: $(cat "$tmp/err")"
on_tty "$floe" append ns.p "$tmp/c1/part-00000.parquet" --quiet > "$tmp/tty.txt"
[ ! -s "$tmp/tty.txt" ] || fail "append --quiet on a tty drew: $(cat -v "$tmp/tty.txt")"

# rewrite
on_tty "$floe" rewrite ns.p -o min-input-files=2 > "$tmp/tty.txt" || fail "rewrite on a tty failed"
grep -aq $'\rfloe rewrite: .* of .* (100%), .*/s.*groups 1/1' "$tmp/tty.txt" || fail "rewrite on a tty: no progress line: $(cat -v "$tmp/tty.txt")"
grep -q '^rewrote 3 data files' "$tmp/out" || fail "rewrite on a tty: result $(cat "$tmp/out")"
"$floe" append ns.p "$tmp/in.ndjson" >/dev/null
"$floe" rewrite ns.p -o min-input-files=2 > "$tmp/out" 2> "$tmp/err"
[ ! -s "$tmp/err" ] || fail "rewrite without a tty wrote to stderr: $(cat "$tmp/err")"
"$floe" append ns.p "$tmp/in.ndjson" >/dev/null
on_tty "$floe" rewrite ns.p -o min-input-files=2 -q > "$tmp/tty.txt"
[ ! -s "$tmp/tty.txt" ] || fail "rewrite -q on a tty drew: $(cat -v "$tmp/tty.txt")"

[ $fails = 0 ] || exit 1
echo "$name: ok"
