#!/usr/bin/env bash
# disk_full.sh - floe convert into a small tmpfs that fills up (issue 10, part 3).
#
# Expect: a clear error naming the lack of space (exit 1), no partial file left (neither a
# Parquet file nor a FileIO temporary), the space given back, and success once space is
# freed. Needs root for `mount -t tmpfs`; where mounting is not permitted the test prints
# a SKIPPED line saying so and exits 77, which ctest reports as a skip (the server's 503 +
# Retry-After on a full disk is tested with the server).
set -euo pipefail
FLOE=${FLOE_BIN:-build/floe}
work=$(mktemp -d /tmp/floe-diskfull-XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt"
cleanup() {
    mountpoint -q "$mnt" && umount "$mnt"
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "disk_full: FAIL: $*" >&2; exit 1; }

if ! mount -t tmpfs -o size=2m tmpfs "$mnt" 2>"$work/mount.err"; then
    echo "disk_full: SKIPPED (1 test): cannot mount a tmpfs here: $(cat "$work/mount.err")"
    exit 77
fi

# Incompressible-ish input, stored uncompressed: its Parquet output is well over 2 MB.
"$FLOE" gen --seed 7 --count 40000 -o "$work/big.ndjson" --schema-out "$work/schema.json" \
    >/dev/null
"$FLOE" gen --seed 8 --count 2000 -o "$work/small.ndjson" >/dev/null
[ "$(stat -c %s "$work/big.ndjson")" -gt 4000000 ] || fail "input too small to fill 2 MB"

used_kb() { df -k --output=used "$mnt" | tail -1 | tr -d ' '; }
no_partial() { # $1: folder; nothing but complete files named in $2 (a regex) may remain
    local bad
    bad=$(find "$1" -type f 2>/dev/null | grep -Ev "${2:-^$}" || true)
    [ -z "$bad" ] || fail "left behind after the failure: $bad"
    if find "$1" -name '*.floe-tmp-*' 2>/dev/null | grep -q .; then
        fail "temporary file left behind: $(find "$1" -name '*.floe-tmp-*')"
    fi
}

# 1. The whole conversion does not fit.
base=$(used_kb)
set +e
"$FLOE" convert -s "$work/schema.json" -c none -j 2 "$work/big.ndjson" -o "$mnt/out" \
    >"$work/out1" 2>"$work/err1"
rc=$?
set -e
[ $rc -eq 1 ] || fail "convert into a full disk exited $rc (want 1); stderr: $(cat "$work/err1")"
grep -qiE 'no space left|ENOSPC' "$work/err1" ||
    fail "the error does not say the disk is full: $(cat "$work/err1")"
no_partial "$mnt"
[ "$(used_kb)" -le $((base + 8)) ] || fail "space not given back: $(used_kb) KB used"
echo "disk_full: full disk reported: $(head -c 300 "$work/err1" | tr '\n' ' ')"

# 2. A disk nearly full from something else; a small conversion fails, then succeeds once
# the other file is gone.
dd if=/dev/zero of="$mnt/filler" bs=1k count=1900 status=none 2>/dev/null || true
set +e
"$FLOE" convert -s "$work/schema.json" -c none -j 1 "$work/small.ndjson" -o "$mnt/out2" \
    >"$work/out2" 2>"$work/err2"
rc=$?
set -e
[ $rc -eq 1 ] || fail "convert with 100 KB free exited $rc (want 1); stderr: $(cat "$work/err2")"
grep -qiE 'no space left|ENOSPC' "$work/err2" || fail "unclear error: $(cat "$work/err2")"
no_partial "$mnt" '/filler$'

rm -f "$mnt/filler"
"$FLOE" convert -s "$work/schema.json" -c none -j 1 "$work/small.ndjson" -o "$mnt/out2" \
    >"$work/out3" 2>"$work/err3" || fail "convert after freeing space: $(cat "$work/err3")"
rows=$("$FLOE" inspect --json "$mnt/out2/part-00000.parquet" |
       sed -n 's/.*"num_rows": *\([0-9]*\).*/\1/p' | head -1)
[ "$rows" = 2000 ] || fail "after freeing space: $rows rows (want 2000)"
no_partial "$mnt" '/out2/part-00000\.parquet$'
echo "disk_full: ok (full disk fails cleanly, nothing partial left, works again once freed)"
