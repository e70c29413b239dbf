#!/usr/bin/env bash
# rest_client_paging.sh - floe as a REST client follows a catalog's pages to the end and
# never loops on a server whose paging does not end (adversary finding on issue 21: a
# next-page-token that repeats kept `floe namespace list` requesting forever, its memory
# growing). A stand-in catalog answers the listing routes in one of these modes:
#   pages  - three pages (tokens p1, p2, then none): every name listed once;
#   same   - every page one new name and the token "x": refused at the second "x";
#   cycle  - tokens a, b, a: refused when a comes again;
#   empty  - no names and a new token every page: refused after 1000 empty pages.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "rest_client_paging: SKIP: no python3"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "rest_client_paging: FAIL: $*" >&2; fails=$((fails + 1)); }
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
export FLOE_STATE_DB=$tmp/state.db

cat > "$tmp/cat.py" <<'PY'
import sys, urllib.parse
sys.path.insert(0, sys.argv[1])
from json_http import JsonHandler, serve
mode = sys.argv[3]
n = {"pages": 0}
class H(JsonHandler):
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        tok = urllib.parse.parse_qs(u.query).get("pageToken", [None])[0]
        if u.path == "/v1/config":
            return self.answer(200, {"defaults": {}, "overrides": {}})
        n["pages"] += 1
        if n["pages"] > 5000:  # a client that would never stop
            return self.answer(500, {"error": {"message": "too many pages", "type": "X", "code": 500}})
        if mode == "pages":
            nxt = {None: "p1", "p1": "p2", "p2": None}[tok]
            names = [["%s%d" % (tok or "p0", i)] for i in range(3)]
        elif mode == "same":
            nxt, names = "x", [["n%d" % n["pages"]]]
        elif mode == "cycle":
            nxt, names = {None: "a", "a": "b", "b": "a"}[tok], [["c%d" % n["pages"]]]
        else:
            nxt, names = "e%d" % n["pages"], []
        body = {"namespaces": names}
        if nxt:
            body["next-page-token"] = nxt
        self.answer(200, body)
serve(H, sys.argv[2])
PY

run() { # mode: starts the stand-in, runs floe namespace list into $tmp/out, $tmp/err
  rm -f "$tmp/port"
  python3 "$tmp/cat.py" "$src/tests/integration/lib" "$tmp/port" "$1" 2>"$tmp/cat.log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  [ -s "$tmp/port" ] || { echo "rest_client_paging: FAIL: stand-in did not start: $(cat "$tmp/cat.log")"; exit 1; }
  rc=0
  FLOE_CATALOG_URI=http://127.0.0.1:$(cat "$tmp/port") timeout 120 "$floe" namespace list \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  pid=
}

run pages
[ "$rc" = 0 ] || fail "pages: rc $rc: $(cat "$tmp/err")"
[ "$(sort "$tmp/out" | tr '\n' ' ')" = "p00 p01 p02 p10 p11 p12 p20 p21 p22 " ] ||
  fail "pages: listed $(tr '\n' ' ' < "$tmp/out")"
run same
[ "$rc" = 1 ] || fail "same: rc $rc (want 1): $(tail -2 "$tmp/err")"
grep -q "next-page-token is one the server gave before" "$tmp/err" || fail "same: $(cat "$tmp/err")"
run cycle
[ "$rc" = 1 ] || fail "cycle: rc $rc (want 1): $(tail -2 "$tmp/err")"
grep -q "page 3's next-page-token is one the server gave before" "$tmp/err" || fail "cycle: $(cat "$tmp/err")"
run empty
[ "$rc" = 1 ] || fail "empty: rc $rc (want 1): $(tail -2 "$tmp/err")"
grep -q "1000 pages in a row without an item" "$tmp/err" || fail "empty: $(cat "$tmp/err")"
[ "$fails" = 0 ] || exit 1
echo "rest_client_paging: ok"
