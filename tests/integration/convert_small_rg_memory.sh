#!/usr/bin/env bash
# convert_small_rg_memory.sh - `floe convert`'s peak RSS stays within issue 22's bound,
# 1.5 x row group + 64 MiB, at a small row group (4 MB: 70 MiB) on one and two threads,
# for plain, gzip and zstd input of the bench shapes (floe gen's events, iot, wide,
# nested; 32 MB each). The peak is the process's VmHWM (ru_maxrss, read by python3 from
# its waited child). Before the chunks followed the row group (src/convert/convert.c,
# chunk_default) and the read buffers were sized exactly (line_reader.c), 9 of the 24
# runs were over, all on two threads: 74-95 MiB (gzip and zstd; wide plain 77).
#
# A sanitized floe's allocator inflates memory: then the Release build beside the sources
# (build/floe) is measured if it is there and no newer source exists; else skipped (77).
# ctest parts: plain gzip zstd
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
part=${1:-all}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "convert_small_rg_memory: FAIL: $*" >&2; exit 1; }
skip() { echo "convert_small_rg_memory: $*: skipped"; exit 77; }
command -v python3 > /dev/null || skip "no python3"

sanitized() { # binary; ldd's whole output first (no `ldd | grep -q` under pipefail)
  local libs
  libs=$(ldd "$1" 2>/dev/null || true)
  case $libs in *libasan.so* | *libubsan.so* | *libtsan.so*) return 0 ;; esac
  return 1
}
if sanitized "$floe"; then
  rel=$src/build/floe
  [ -x "$rel" ] && ! sanitized "$rel" ||
    skip "sanitized floe (its allocator inflates memory) and no Release build at $rel"
  newer=$(find "$src/src" "$src/include" -newer "$rel" -type f -print -quit)
  [ -z "$newer" ] || skip "sanitized floe, and the Release build $rel is older than $newer"
  echo "convert_small_rg_memory: sanitized floe: measuring the Release build $rel"
  floe=$rel
fi
case $part in
  plain | all) ;;
  gzip) command -v gzip > /dev/null || skip "no gzip" ;;
  zstd) command -v zstd > /dev/null || skip "no zstd" ;;
  *) fail "unknown part '$part'" ;;
esac

rg_mib=4
bound_kib=$(( (rg_mib * 3 / 2 + 64) * 1024 ))
peak_kib() { # command...: the command's VmHWM in KiB (it must succeed)
  python3 - "$@" <<'PY'
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
if r.returncode != 0:
    sys.exit("exit status %d" % r.returncode)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
bad=""
for shape in events iot wide nested; do
  if [ "$shape" = events ]; then
    schema=$src/tests/data/events.schema.json
    "$floe" gen --seed 1 --bytes 32M -o "$tmp/in.ndjson" > /dev/null
  else
    schema=$src/bench/shapes/$shape.schema.json
    python3 "$src/bench/shapes/gen.py" "$shape" 32M "$tmp/in.ndjson" > /dev/null
  fi
  forms=""
  case $part in
    plain | all) forms+=" plain" ;;&
    gzip | all) command -v gzip > /dev/null && forms+=" gzip" ;;&
    zstd | all) command -v zstd > /dev/null && forms+=" zstd" ;;
  esac
  for form in $forms; do
    in=$tmp/in.ndjson
    case $form in
      gzip) gzip -1 -c "$tmp/in.ndjson" > "$tmp/in.ndjson.gz"; in=$tmp/in.ndjson.gz ;;
      # a level-19 file's window (8 MiB) at a level that takes a second
      zstd) zstd -q -3 --zstd=wlog=23 -c "$tmp/in.ndjson" > "$tmp/in.ndjson.zst"; in=$tmp/in.ndjson.zst ;;
    esac
    for t in 1 2; do
      rm -rf "$tmp/out"
      kib=$(peak_kib "$floe" convert -j "$t" --schema "$schema" --row-group-size "${rg_mib}MB" \
        "$in" -o "$tmp/out") || fail "$shape $form, $t thread(s): convert failed"
      echo "convert_small_rg_memory: $shape $form, $t thread(s): peak RSS $((kib / 1024)) MiB (bound $((bound_kib / 1024)))"
      [ "$kib" -le "$bound_kib" ] || bad+=" $shape/$form/$t:$((kib / 1024))MiB"
    done
    rm -f "$tmp/in.ndjson.gz" "$tmp/in.ndjson.zst"
  done
done
rm -rf "$tmp/out"
[ -z "$bad" ] || fail "peak RSS over 1.5 x ${rg_mib} MiB + 64 MiB = $((bound_kib / 1024)) MiB:$bad"
echo "convert_small_rg_memory: ok"
