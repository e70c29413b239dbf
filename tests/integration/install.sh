#!/usr/bin/env bash
# install.sh - `make install` gives a usable library: the program, libfloe (static and
# shared), every public header (each compiles on its own, C11, -Wall -Wextra -Werror) and a
# pkg-config file through which a program links and runs.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
build=$(dirname "$floe")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install: FAIL: $*" >&2; exit 1; }

DESTDIR=$tmp/root cmake --install "$build" --prefix /usr/local > "$tmp/install.log" ||
  fail "cmake --install: $(cat "$tmp/install.log")"
root=$tmp/root/usr/local
libdir=$(ls -d "$root"/lib* | head -n 1)
for f in bin/floe include/floe/common.h include/floe/convert.h include/floe/table.h; do
  [ -e "$root/$f" ] || fail "missing $f"
done
[ -e "$libdir/libfloe.a" ] || fail "missing libfloe.a"
[ -e "$libdir/libfloe.so" ] || fail "missing libfloe.so"
[ -e "$libdir/pkgconfig/floe.pc" ] || fail "missing floe.pc"
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
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tmp/root
flags=$(pkg-config --cflags --libs floe) || fail "pkg-config floe"
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
echo "install: 1 passed, 0 failed"
