#!/usr/bin/env bash
# rest_list_bounded.sh - listing through a REST catalog holds a bounded amount (adversary
# finding F5 on issue 21): `floe namespace list` and `floe table list` kept every page of
# a listing until the last, with no limit on pages, so a catalog that keeps answering new
# next-page-tokens (a bug, or a listing too large) grew floe's memory without bound and
# printed nothing. Against a stand-in catalog whose paging never ends (1000 names a page,
# each page's next-page-token new; long names so the bytes count):
#  - floe namespace list, floe namespace list --json, floe table list NS: exit 1 within
#    the time limit, "more than 1000000 names or 64 MiB of them ... floe stops there",
#    peak RSS (/usr/bin/time) below the bound;
#  - a catalog that ends its paging: every name of every page listed (control).
set -euo pipefail
name=rest_list_bounded
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "$name: python3 missing, skipped"; exit 77; }
[ -x /usr/bin/time ] || { echo "$name: /usr/bin/time missing, skipped"; exit 77; }
tmp=$(mktemp -d)
mock=
trap '[ -n "$mock" ] && kill "$mock" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_WAREHOUSE \
  FLOE_CATALOG_TOKEN FLOE_CATALOG_CREDENTIAL || true
export HOME=$tmp/home
mkdir -p "$HOME"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
# the bound on peak RSS: floe holds at most 1000000 names / 64 MiB of them; a sanitized
# build's allocator takes several times that
max_rss_kb=${REST_LIST_MAX_RSS_KB:-900000}
time_limit=${REST_LIST_TIME_LIMIT:-180}

# the stand-in: GET /v1/namespaces (top level) and .../tables page forever (MODE endless)
# or end after 3 pages (MODE ending)
cat > "$tmp/standin.py" <<'PY'
import json, sys, urllib.parse
sys.path.insert(0, sys.argv[3])
from json_http import JsonHandler, serve
MODE = sys.argv[2]
PAD = "x" * 40
class H(JsonHandler):
    protocol_version = "HTTP/1.1"
    def answer(self, code, body):  # one write: no Nagle / delayed-ACK wait per page
        data = json.dumps(body).encode()
        self.wfile.write(b"HTTP/1.1 %d OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (code, len(data), data))
    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        if u.path == "/v1/config":
            return self.answer(200, {"defaults": {}, "overrides": {}})
        if "parent" in q:  # table list's walk of namespaces below NS: none
            return self.answer(200, {"namespaces": []})
        n = int(q.get("pageToken", ["0"])[0])
        page = ["%s_%d_%d" % (PAD, n, i) for i in range(1000)]
        nxt = None if MODE == "ending" and n == 2 else str(n + 1)
        if u.path.endswith("/tables"):
            body = {"identifiers": [{"namespace": ["shop"], "name": p} for p in page]}
        else:
            body = {"namespaces": [[p] for p in page]}
        if nxt:
            body["next-page-token"] = nxt
        self.answer(200, body)
serve(H, sys.argv[1])
PY
start() {
  [ -n "$mock" ] && { kill "$mock" 2>/dev/null; wait "$mock" 2>/dev/null || true; }
  rm -f "$tmp/port"
  python3 "$tmp/standin.py" "$tmp/port" "$1" "$src/tests/integration/lib" &
  mock=$!
  for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  [ -s "$tmp/port" ] || { echo "$name: FAIL: the stand-in did not start" >&2; exit 1; }
  export FLOE_CATALOG_URI=http://127.0.0.1:$(cat "$tmp/port")
}
bad=0
miss() { echo "$name: FAIL: $*" >&2; bad=$((bad + 1)); }
# bounded WHAT PATTERN ARGS...: floe ARGS stops with exit 1 and PATTERN in its error,
# within the time limit, its peak RSS below the bound
bounded() {
  local what=$1 pat=$2 rc=0 rss
  shift 2
  timeout -s KILL "$time_limit" /usr/bin/time -v -o "$tmp/time" "$floe" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time" 2>/dev/null || true)
  if [ "$rc" = 137 ] || [ -z "$rss" ]; then
    miss "$what: still running after ${time_limit}s (killed)"
    return
  fi
  echo "$name: $what: exit $rc, peak RSS $rss kB, $(wc -c < "$tmp/out") bytes out"
  [ "$rc" = 1 ] || miss "$what: exit $rc, expected 1: $(tail -c 300 "$tmp/err")"
  grep -q -- "$pat" "$tmp/err" || miss "$what: unclear error: $(tail -c 300 "$tmp/err")"
  [ "$rss" -lt "$max_rss_kb" ] || miss "$what: peak RSS $rss kB, bound $max_rss_kb kB"
}

start endless
limit="more than 1000000 names or 64 MiB of them (page 1001): floe stops there"
bounded "namespace list" "REST catalog: list namespaces: $limit" namespace list
bounded "namespace list --json" "REST catalog: list namespaces: $limit" namespace list --json
bounded "table list shop" "REST catalog: list tables: $limit" table list shop

# control: a paging that ends lists all of it
start ending
"$floe" namespace list > "$tmp/out" 2>"$tmp/err" || miss "an ending paging: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/out")" = 3000 ] || miss "an ending paging: $(wc -l < "$tmp/out") names, expected 3000"
"$floe" table list shop > "$tmp/out" 2>"$tmp/err" || miss "an ending table paging: $(cat "$tmp/err")"
[ "$(wc -l < "$tmp/out")" = 3000 ] || miss "an ending table paging: $(wc -l < "$tmp/out") tables, expected 3000"
[ "$bad" = 0 ] || { echo "$name: FAIL: $bad checks failed" >&2; exit 1; }
echo "$name: ok"
