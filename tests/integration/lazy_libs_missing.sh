#!/usr/bin/env bash
# lazy_libs_missing.sh - a library loaded when first needed (src/common/lazylib.h) that
# cannot be loaded is an error like any other: the command that needs it exits 1 with
# "floe: ... <soname> is needed for <what> and could not be loaded: <dlerror>" (or
# "... and lacks <function>"), and the process neither crashes nor is ended from inside
# libfloe. FLOE_TEST_LAZYLIB_SONAME (read by the floe command, tests only) points a
# library at a soname that does not exist, or at a library without its functions, for:
# S3 and a REST catalog (libcurl), a PostgreSQL catalog (libpq), floe serve's HTTP
# listener and floe catalog serve (libmicrohttpd), and a Kafka source (librdkafka).
set -euo pipefail
floe=$(realpath "${FLOE_BIN:?FLOE_BIN}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG FLOE_CATALOG_URI PYICEBERG_HOME \
  FLOE_TEST_LAZYLIB_SONAME || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$tmp"

# expect WHAT PATTERN CMD...: CMD exits 1 (not a signal, not a sanitizer's exit) and its
# standard error holds PATTERN (a grep -E expression), on a line starting "floe: "
expect() {
  local what=$1 pattern=$2
  shift 2
  local rc=0
  timeout 30 "$@" > out 2> err < /dev/null || rc=$?
  if [ $rc != 1 ]; then
    fail "$what: exit $rc (expected 1): $(head -c 2000 err)"
  elif ! grep -Eq "^floe: .*$pattern" err; then
    fail "$what: no '$pattern' in: $(head -c 2000 err)"
  elif grep -q "internal error" err; then
    fail "$what: $(cat err)"
  fi
}

missing=libfloe-test-missing.so.0
# a port nothing listens on
port=9

export FLOE_TEST_LAZYLIB_SONAME=curl=$missing
expect "S3 (libcurl missing)" \
  "$missing is needed for s3:// locations and REST catalogs and could not be loaded: .*$missing" \
  env AWS_ACCESS_KEY_ID=a AWS_SECRET_ACCESS_KEY=b AWS_REGION=us-east-1 \
  AWS_ENDPOINT_URL_S3=http://127.0.0.1:$port "$floe" scan s3://wh/t/metadata/v1.metadata.json \
  --plan
expect "REST catalog (libcurl missing)" \
  "REST catalog http://127.0.0.1:$port/: $missing is needed for s3:// locations and REST catalogs and could not be loaded" \
  env FLOE_CATALOG_URI=http://127.0.0.1:$port/ FLOE_CATALOG=c "$floe" scan db.t --plan
# a library that loads but is not libcurl: the first function it lacks is named
libz=$(ldd "$floe" | sed -n 's/^[[:space:]]*\(libz\.so\.[0-9]*\) =>.*/\1/p' | head -1)
if [ -n "$libz" ]; then
  FLOE_TEST_LAZYLIB_SONAME=curl=$libz expect "REST catalog (libcurl is $libz)" \
    "$libz is needed for s3:// locations and REST catalogs and lacks curl_easy_cleanup" \
    env FLOE_CATALOG_URI=http://127.0.0.1:$port/ FLOE_CATALOG=c "$floe" scan db.t --plan
else
  fail "the floe program does not link libz (ldd): the check of a library lacking a function needs another library"
fi

export FLOE_TEST_LAZYLIB_SONAME=pq=$missing
expect "PostgreSQL catalog (libpq missing)" \
  "$missing is needed for PostgreSQL catalogs and could not be loaded" \
  env FLOE_CATALOG_URI=postgresql://127.0.0.1:$port/x FLOE_CATALOG=c FLOE_WAREHOUSE=$tmp \
  "$floe" scan db.t --plan

# the servers: a schema, a table for the Kafka source
"$floe" gen --schema-out "$tmp/schema.json" > /dev/null
conf() { # conf NAME [kafka]
  {
    printf '[server]\nlisten = 127.0.0.1:0\nwarehouse = %s/wh-%s\nnode_id = a\n' "$tmp" "$1"
    printf 'wal_dir = %s/wal-%s\nmaintain = false\n' "$tmp" "$1"
    if [ "${2:-}" = kafka ]; then
      printf '[source kafka raw]\nbootstrap.servers = 127.0.0.1:%s\ntopics = ev\n' "$port"
      printf 'table = raw.ev\n'
    fi
    printf '[table raw.ev]\nschema = %s\n' "$tmp/schema.json"
  } > "$tmp/$1.conf"
}
conf http
export FLOE_TEST_LAZYLIB_SONAME=mhd=$missing
expect "floe serve (libmicrohttpd missing)" \
  "$missing is needed for the HTTP servers \\(floe serve, floe catalog serve\\) and could not be loaded" \
  "$floe" serve --config "$tmp/http.conf" --port-file "$tmp/port-http"
[ ! -s "$tmp/port-http" ] || fail "floe serve wrote its port without libmicrohttpd"
expect "floe catalog serve (libmicrohttpd missing)" \
  "$missing is needed for the HTTP servers \\(floe serve, floe catalog serve\\) and could not be loaded" \
  env FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=$tmp/wh-rest \
  "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port-rest"
[ ! -s "$tmp/port-rest" ] || fail "floe catalog serve wrote its port without libmicrohttpd"

conf kafka kafka
export FLOE_TEST_LAZYLIB_SONAME=kafka=$missing
expect "floe serve with a Kafka source (librdkafka missing)" \
  "$missing is needed for Kafka sources \\(floe serve\\) and could not be loaded" \
  "$floe" serve --config "$tmp/kafka.conf" --port-file "$tmp/port-kafka"

# the setting itself
export FLOE_TEST_LAZYLIB_SONAME=nosuchlib=$missing
expect "an unknown library" "no lazily loaded library 'nosuchlib'" "$floe" scan db.t --plan

[ $fails = 0 ] || { echo "lazy_libs_missing: $fails checks failed"; exit 1; }
echo "lazy_libs_missing: ok"
