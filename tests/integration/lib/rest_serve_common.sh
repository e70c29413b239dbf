# rest_serve_common.sh - sourced by tests of `floe catalog serve` over raw HTTP
# (rest_body_budget.sh, rest_http_edges.sh, rest_slow_clients.sh, rest_utf8_paths.sh,
# rest_commit_paths.sh, rest_create_grant.sh, ...): a scratch SQLite catalog, the sanitizer
# exit codes, and start_server ARGS (the server on a free port: $port, $base, $pid; its
# log $tmp/server.log), stopped at exit; serve_checked (the same with a tokens file and
# the OpenAPI-checking proxy in front) and openapi_check; fail, req, expect and jget below;
# shop_table, serve_table and loaded: a table with snapshots behind an open server;
# open_shop and id_schema: namespace shop behind an open server, a one-column schema.
# Expects $name (the test's name) to be set.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v python3 >/dev/null || { echo "$name: python3 missing, skipped"; exit 77; }
tmp=$(mktemp -d)
pid=
proxy_pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_TEST_REST_FAULT || true
export FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=$tmp/wh
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98

start_server() {
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" "$@" 2>"$tmp/server.log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  [ -s "$tmp/port" ] || { echo "$name: FAIL: the server did not start: $(cat "$tmp/server.log")"; exit 1; }
  port=$(cat "$tmp/port")
  base=http://127.0.0.1:$port
}

# to_fs_catalog DIR: stops the server and points floe (and the next start_server) at a
# filesystem catalog whose warehouse is DIR
to_fs_catalog() {
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=
  rm -f "$tmp/port"
  mkdir -p "$1"
  export FLOE_CATALOG_TYPE=filesystem FLOE_WAREHOUSE=$1
  unset FLOE_CATALOG_URI
}

# the schema of most tests' tables: one optional long column, id
id_schema='{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}'

# open_shop [ARGS]: namespace shop, then start_server ARGS; requests go with token T=open
open_shop() {
  "$floe" namespace create shop >/dev/null
  start_server "$@"
  T=open
}

# fail MESSAGE: the test fails at once, with the server's last log lines
fail() {
  echo "$name: FAIL: $*" >&2
  tail -5 "$tmp/server.log" 2>/dev/null | sed 's/^/  server: /' >&2
  exit 1
}

# soft MESSAGE: counts a failure in $fails and goes on, so that a run against the binary
# from before a fix says how many cases it gets wrong; a test ends with
# [ "$fails" = 0 ] || fail "$fails cases failed"
fails=0
soft() { echo "$name: FAIL: $*" >&2; fails=$((fails + 1)); }

# expect_soft WHAT STATUS TEXT METHOD PATH [BODY]: req with the token $T; a soft failure
# unless the status is STATUS and the body holds TEXT
expect_soft() {
  local what=$1 want=$2 text=$3 got
  shift 3
  got=$(req "$T" "$@")
  if [ "$got" != "$want" ] || ! grep -qF -- "$text" "$tmp/body"; then
    soft "$what: $got (expected $want '$text'): $(head -c 300 "$tmp/body")"
  fi
}

# req TOKEN METHOD PATH [BODY]: the HTTP status of a request to the server with a bearer
# token (curl); the answer's body in $tmp/body
req() {
  local tok=$1 m=$2 p=$3
  shift 3
  curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $tok" \
    -H 'Content-Type: application/json' -X "$m" "$base$p" \
    ${1+-d "$1"}
}

# kpost KEY PATH BODY: the HTTP status of a POST with Idempotency-Key KEY (no token); the
# answer's body in $tmp/body
kpost() {
  curl -s -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -H "Idempotency-Key: $1" -X POST "$base$2" -d "$3"
}

# expect STATUS TOKEN METHOD PATH [BODY]: req, failing unless the status is STATUS
expect() {
  local want=$1 got
  shift
  got=$(req "$@")
  [ "$got" = "$want" ] || fail "$2 $3 (token $1) -> $got, expected $want: $(head -c 300 "$tmp/body")"
}

# shop_table NAME N: namespace shop and in it table shop.NAME (one long column, id; its
# schema in $tmp/s.json), made through the SQLite catalog with N appends of 10 rows
# (ids 1 to 10N), one snapshot each
shop_table() {
  echo '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}' > "$tmp/s.json"
  "$floe" namespace create shop >/dev/null
  "$floe" table create "shop.$1" --schema "$tmp/s.json" >/dev/null
  local k
  for k in $(seq "$2"); do
    seq $((k * 10 - 9)) $((k * 10)) | sed 's/.*/{"id":&}/' > "$tmp/in.ndjson"
    "$floe" append "shop.$1" "$tmp/in.ndjson" >/dev/null
  done
}

# serve_table NAME: serve_checked "" (an open server: any token $T), $tbl the path of
# table shop.NAME, its LoadTableResult saved in $tmp/NAME.json
serve_table() {
  serve_checked ""
  T=none
  tbl=/v1/namespaces/shop/tables/$1
  [ "$(req $T GET "$tbl")" = 200 ] || fail "load shop.$1: $(head -c 300 "$tmp/body")"
  cp "$tmp/body" "$tmp/$1.json"
}

# loaded FILE EXPR: python expression EXPR over the LoadTableResult saved in FILE (d; m is
# its metadata)
loaded() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["metadata"]; print(eval(sys.argv[2]))' "$1" "$2"; }
# in_order FILE KEY: KEY ("snapshot-id", "manifest-list") of FILE's snapshots in commit order
in_order() {
  loaded "$1" "' '.join(str(s['$2']) for s in sorted(m['snapshots'], key=lambda s: s['sequence-number']))"
}

# jget EXPR: the JSON document on stdin, d, indexed by EXPR (e.g. '["metadata"]["location"]')
jget() { python3 -c 'import sys,json; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

# the server is still running (no sanitizer report ended it)
server_alive() {
  kill -0 "$pid" || { echo "$name: FAIL: the server died: $(tail -5 "$tmp/server.log")"; exit 1; }
}

# serve_checked TOKENS [ARGS...]: TOKENS (the text of a tokens file; "": an open server) in
# $tmp/tokens.conf, mode 600 (it holds secrets: catalog serve refuses one others may read), the server
# started with it (start_server --tokens ... ARGS), and in front of it, when node and the
# validator's modules are installed (scripts/setup --test), tests/js/openapi_proxy.mjs:
# then $base is the proxy, every exchange is checked against the REST spec's OpenAPI
# document, and openapi_check fails the test on any it does not allow.
serve_checked() {
  if [ -n "$1" ]; then
    printf '%s\n' "$1" > "$tmp/tokens.conf"
    chmod 600 "$tmp/tokens.conf"
    shift
    start_server --tokens "$tmp/tokens.conf" "$@"
  else
    shift
    start_server "$@"
  fi
  local js=$src/tests/js m
  command -v node >/dev/null || { echo "$name: node missing: exchanges not checked against the OpenAPI document"; return 0; }
  for m in ajv ajv-formats yaml; do
    [ -f "$js/node_modules/$m/package.json" ] ||
      { echo "$name: $m not installed: exchanges not checked against the OpenAPI document"; return 0; }
  done
  node "$js/openapi_proxy.mjs" "$src/tests/data/rest/rest-catalog-open-api.yaml" "$base" \
    "$tmp/openapi.port" "$tmp/openapi.log" default 2>>"$tmp/proxy.err" &
  proxy_pid=$!
  for _ in $(seq 600); do [ -s "$tmp/openapi.port" ] && break; sleep 0.1; done
  [ -s "$tmp/openapi.port" ] || fail "the OpenAPI proxy did not start: $(cat "$tmp/proxy.err")"
  base=http://127.0.0.1:$(cat "$tmp/openapi.port")
}

# openapi_check: fails the test on any exchange through serve_checked's proxy that the
# OpenAPI document does not allow (nothing to check without the proxy)
openapi_check() {
  [ -n "$proxy_pid" ] || return 0
  python3 - "$tmp/openapi.log" "$name" <<'PY' || fail "exchanges the OpenAPI document does not allow"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
bad = [l for l in lines if l.get("problems")]
for l in bad[:20]:
    print(f'  {l["method"]} {l["path"]} -> {l.get("status")}: {"; ".join(l["problems"])}', file=sys.stderr)
print(f"{sys.argv[2]}: {len(lines)} exchanges checked against the OpenAPI document, {len(bad)} violations")
sys.exit(1 if bad or not lines else 0)
PY
}
