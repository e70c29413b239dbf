#!/usr/bin/env bash
# install.sh - an install into any prefix gives a usable library: the program, libfloe
# (static and shared), every public header (each compiles on its own, C11, -Wall -Wextra
# -Werror) and a floe.pc that points at that prefix (whatever prefix the build was
# configured with) through which the programs of examples/ build, shared and static, and
# run: convert NDJSON to Parquet, append to a table in a SQLite catalog, scan it with a
# filter.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
build=$(dirname "$floe")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install: FAIL: $*" >&2; exit 1; }
command -v pkg-config > /dev/null || { echo "install: SKIP: no pkg-config"; exit 77; }

root=$tmp/prefix
cmake --install "$build" --prefix "$root" > "$tmp/install.log" ||
  fail "cmake --install: $(cat "$tmp/install.log")"
libdir=$(ls -d "$root"/lib* | head -n 1)
# `make install PREFIX=...` installs into PREFIX whatever prefix the build was first
# configured with (its CMAKE_INSTALL_PREFIX): the rule passes --prefix on every install
if command -v make > /dev/null && [ -f "$src/Makefile" ]; then
  configured=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
  [ "$configured" != "$tmp/other" ] || fail "the build was configured with the test's prefix"
  make -s -n -C "$src" install BUILD="$build" PREFIX="$tmp/other" > "$tmp/make.log" 2>&1 ||
    fail "make -n install: $(cat "$tmp/make.log")"
  grep -q -- "--install $build --prefix $tmp/other\$" "$tmp/make.log" ||
    fail "make install PREFIX=$tmp/other does not install there (configured: $configured): $(cat "$tmp/make.log")"
fi
for f in bin/floe include/floe/floe.h include/floe/common.h include/floe/convert.h \
         include/floe/table.h; do
  [ -e "$root/$f" ] || fail "missing $f"
done
[ -e "$libdir/libfloe.a" ] || fail "missing libfloe.a"
[ -e "$libdir/libfloe.so" ] || fail "missing libfloe.so"
[ -e "$libdir/pkgconfig/floe.pc" ] || fail "missing floe.pc"
# only public headers: the test hooks stay in src/
if [ -n "$(find "$root/include" -name '*testing*')" ]; then fail "a testing header was installed"; fi
"$root/bin/floe" --version | grep -q "^floe " || fail "installed floe does not run"

# every public header stands alone
for h in "$root"/include/floe/*.h; do
  printf '#include <floe/%s>\nint floe_header_check_%s;\n' "$(basename "$h")" \
    "$(basename "$h" .h)" > "$tmp/h.c"
  cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$root/include" "$tmp/h.c" ||
    fail "header $(basename "$h") does not compile on its own"
done

# a program built through pkg-config links against the installed library and runs
cat > "$tmp/use.c" <<'C'
#include <floe/convert.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    floe_schema *s = NULL;
    floe_error err;
    const char *json = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,"
                       "\"name\":\"a\",\"required\":true,\"type\":\"long\"}]}";
    if (floe_schema_parse(json, strlen(json), &s, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("%zu %s\n", s->nleaves, floe_strerror(FLOE_ECONFLICT));
    floe_schema_free(s);
    return 0;
}
C
export PKG_CONFIG_PATH=$libdir/pkgconfig
flags=$(pkg-config --cflags --libs floe) || fail "pkg-config floe"
case "$(pkg-config --variable=includedir floe)" in
  "$libdir"/pkgconfig/*|"$root"/*) ;;
  *) fail "floe.pc does not point at the prefix: $(pkg-config --variable=includedir floe)" ;;
esac
# the test build is sanitized: a program linking it needs the same runtime
san=""
# (grep reads everything: with -q it could exit early, nm would die of SIGPIPE and
# pipefail would make the test think the library is not sanitized)
if nm -D "$libdir/libfloe.so" | grep __asan_ > /dev/null; then
  san="-fsanitize=address,undefined"
fi
cc -std=c11 $san "$tmp/use.c" $flags -o "$tmp/use" || fail "linking through pkg-config"
out=$(LD_LIBRARY_PATH=$libdir ASAN_OPTIONS=detect_leaks=0 "$tmp/use") || fail "the program failed"
[ "$out" = "1 commit conflict" ] || fail "unexpected output: $out"

# examples/, built twice: against libfloe.so (pkg-config --libs) and against libfloe.a
# (pkg-config --static --libs, the archive named in place of -lfloe so the shared library
# next to it is not picked)
static_flags=$(pkg-config --static --cflags --libs floe) || fail "pkg-config --static floe"
static_flags=${static_flags/-lfloe/$libdir/libfloe.a}
for kind in shared static; do
  mkdir -p "$tmp/$kind"
  for ex in convert_ndjson append_sqlite scan_filter; do
    if [ $kind = shared ]; then f=$flags; else f=$static_flags; fi
    cc -std=c11 -Wall -Wextra -Werror $san "$src/examples/$ex.c" $f -o "$tmp/$kind/$ex" \
      2> "$tmp/cc.log" || fail "examples/$ex.c ($kind): $(cat "$tmp/cc.log")"
  done
  needs=$(readelf -d "$tmp/$kind/append_sqlite" | grep -c 'NEEDED.*libfloe' || true)
  if [ $kind = shared ] && [ "$needs" != 1 ]; then fail "shared example does not load libfloe.so"; fi
  if [ $kind = static ] && [ "$needs" != 0 ]; then fail "static example loads libfloe.so"; fi
done

run() { LD_LIBRARY_PATH=$libdir ASAN_OPTIONS=detect_leaks=0 "$@"; }
printf '{"id":1,"name":"a"}\n{"id":"x"}\n{"id":3,"name":"c"}\n' > "$tmp/in.ndjson"
printf '{"id":1,"event":"view"}\n{"id":2,"event":"click"}\n{"id":3,"event":"click"}\n' \
  > "$tmp/events.ndjson"
for kind in shared static; do
  d=$tmp/run-$kind
  out=$(run "$tmp/$kind/convert_ndjson" "$d/parquet" "$tmp/in.ndjson") ||
    fail "convert_ndjson ($kind) failed: $out"
  echo "$out" | grep -q '^records 3 written 2 rejected 1 files 1$' ||
    fail "convert_ndjson ($kind): $out"
  file=$(echo "$out" | sed -n 's/^file //p')
  [ -s "${file#file://}" ] || fail "convert_ndjson ($kind): no file $file"
  [ "$("$floe" cat "${file#file://}" | wc -l)" = 2 ] || fail "convert_ndjson ($kind): rows"
  grep -qs '"line":2,.*type_mismatch' "$d/parquet/_quarantine/quarantine.ndjson" ||
    fail "convert_ndjson ($kind): the rejected record is not in the quarantine"

  mkdir -p "$d/wh"
  out=$(run "$tmp/$kind/append_sqlite" "$d/cat.db" "$d/wh" "$tmp/events.ndjson") ||
    fail "append_sqlite ($kind) failed: $out"
  echo "$out" | grep -q ' added files 1 records 3 rejected 0$' || fail "append_sqlite ($kind): $out"
  out=$(run "$tmp/$kind/append_sqlite" "$d/cat.db" "$d/wh" "$tmp/events.ndjson") ||
    fail "append_sqlite ($kind), second run: $out"

  out=$(run "$tmp/$kind/scan_filter" "$d/cat.db" "$d/wh" demo events "event = 'click' AND id >= 3" \
        2> "$tmp/scan.err") || fail "scan_filter ($kind) failed: $(cat "$tmp/scan.err")"
  [ "$out" = '{"id":3,"event":"click"}
{"id":3,"event":"click"}' ] || fail "scan_filter ($kind): $out"
  grep -q '^plan: snapshot [0-9]*, 2 data files' "$tmp/scan.err" ||
    fail "scan_filter ($kind): $(cat "$tmp/scan.err")"
  if run "$tmp/$kind/scan_filter" "$d/cat.db" "$d/wh" demo events "nosuch = 1" 2> "$tmp/scan.err"
  then fail "scan_filter ($kind) accepted an unknown column"; fi
  grep -q 'nosuch' "$tmp/scan.err" || fail "scan_filter ($kind): $(cat "$tmp/scan.err")"
done
echo "install: 3 passed, 0 failed"
