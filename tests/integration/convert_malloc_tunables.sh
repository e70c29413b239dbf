#!/usr/bin/env bash
# convert_malloc_tunables.sh - `floe convert` runs with glibc's malloc in transparent huge
# pages, one arena and a fixed 4 MiB mmap threshold (GLIBC_TUNABLES set and the program executed again, under its own
# name, src/cli/main.c), unless the environment already tunes glibc's malloc; it takes
# fewer page faults than with the setting turned off. Skipped (exit 77) in sanitized
# builds (their allocator is not glibc's), where the kernel has THP off, and without
# /usr/bin/time.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "convert_malloc_tunables: FAIL: $*" >&2; exit 1; }
command -v python3 > /dev/null || { echo "convert_malloc_tunables: no python3: skipped"; exit 77; }

# ldd's whole output first: `ldd | grep -q` under pipefail fails when grep stops reading
# early (ldd dies of SIGPIPE), and the sanitized build was then taken for a plain one
libs=$(ldd "$floe" 2>/dev/null || true)
case $libs in
  *libasan.so* | *libubsan.so* | *libtsan.so*)
    echo "convert_malloc_tunables: sanitized build (its allocator is not glibc's): skipped"
    exit 77 ;;
esac
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
case $thp in
  *"[always]"* | *"[madvise]"*) ;;
  *) echo "convert_malloc_tunables: THP off ($thp): skipped"; exit 77 ;;
esac
schema=$src/bench/shapes/iot.schema.json
python3 "$src/bench/shapes/gen.py" iot 64K "$tmp/iot.ndjson" > /dev/null
# the environment of a conversion reading a pipe that stays open. glibc cuts the
# tunables apart in place (':' -> NUL), so /proc/PID/environ is read with NULs as ':'
env_of() { # env arguments... ; prints the running convert's environment, ':'-separated
  rm -f "$tmp/fifo"
  mkfifo "$tmp/fifo"
  env "$@" "$floe" convert --schema "$schema" "$tmp/fifo" -o "$tmp/env-out" > /dev/null &
  local pid=$!
  exec 7> "$tmp/fifo" # opening the pipe waits for the reader: the exec has happened
  local v="" comm=""
  for _ in $(seq 50); do
    v=$(tr '\0' ':' < "/proc/$pid/environ" 2>/dev/null || true)
    [ -n "$v" ] && break
    sleep 0.1
  done
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  head -n 5 "$tmp/iot.ndjson" >&7
  exec 7>&-
  wait "$pid" || fail "convert from a pipe failed"
  rm -rf "$tmp/fifo" "$tmp/env-out"
  # executed again by its own name, so ps and top still show it (not "exe")
  [ "$comm" = "$(basename "$floe" | cut -c1-15)" ] || fail "the running convert is named '$comm'"
  printf ':%s' "$v"
}
want=glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold=4194304
env_of -u GLIBC_TUNABLES | grep -qF ":GLIBC_TUNABLES=$want:" ||
  fail "convert does not run with GLIBC_TUNABLES=$want"
got=$(env_of GLIBC_TUNABLES=glibc.malloc.hugetlb=0)
case $got in
  *":GLIBC_TUNABLES=glibc.malloc.hugetlb=0:"*) ;;
  *) fail "the operator's GLIBC_TUNABLES=glibc.malloc.hugetlb=0 is gone" ;;
esac
case $got in *hugetlb=1*) fail "the operator's glibc.malloc.hugetlb=0 was overridden" ;; esac
env_of GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 |
  grep -qF ":GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096:$want:" ||
  fail "other tunables: not kept, or the malloc ones not added"

# fewer page faults than with the setting off (minor faults, from getrusage via time)
[ -x /usr/bin/time ] || { echo "convert_malloc_tunables: no /usr/bin/time: fault check skipped"; exit 77; }
python3 "$src/bench/shapes/gen.py" iot 12M "$tmp/big.ndjson" > /dev/null
faults() { # threads env...
  local t=$1; shift
  rm -rf "$tmp/f-out"
  env "$@" /usr/bin/time -f '%R' -o "$tmp/faults" "$floe" convert --schema "$schema" -j "$t" \
    "$tmp/big.ndjson" -o "$tmp/f-out" > /dev/null || fail "convert of 12M iot failed"
  tail -n 1 "$tmp/faults"
}
for t in 1 2; do
  on=$(faults "$t" -u GLIBC_TUNABLES)
  off=$(faults "$t" GLIBC_TUNABLES=glibc.malloc.hugetlb=0)
  echo "convert_malloc_tunables: $t threads: $on page faults, $off with glibc.malloc.hugetlb=0"
  [ $((on * 10)) -lt $((off * 7)) ] || fail "$t threads: $on page faults, not under 0.7 x $off"
done
echo "convert_malloc_tunables: ok"
