#!/usr/bin/env bash
# lazy_libs_missing.sh - a library loaded when first needed (src/common/lazylib.h) that
# cannot be loaded is an error like any other: the command that needs it exits 1 with
# "floe: ... <soname> is needed for <what> and could not be loaded: <dlerror>" (or
# "... and lacks <function>"), and the process neither crashes nor is ended from inside
# libfloe. FLOE_TEST_LAZYLIB_SONAME (read by the floe command, tests only) points a
# library at a soname that does not exist, or at a library without its functions, for:
# S3 and a REST catalog (libcurl), a PostgreSQL catalog (libpq), floe serve's HTTP
# listener and floe catalog serve (libmicrohttpd), a Kafka source (librdkafka), writing
# and reading Snappy (libsnappy), S3 and a long partition value's hash (libcrypto), and
# placing a table (ICU's libicuuc, when built with ICU).
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

# libsnappy: writing and reading Snappy pages
unset FLOE_TEST_LAZYLIB_SONAME
"$floe" gen --count 50 -o ev.ndjson > /dev/null 2>&1
"$floe" convert -s "$tmp/schema.json" -c snappy ev.ndjson -o snappy > /dev/null 2>&1 ||
  fail "a Snappy convert with libsnappy failed"
export FLOE_TEST_LAZYLIB_SONAME=snappy=$missing
snappy_msg="$missing is needed for Snappy compression \\(Parquet pages, Avro blocks\\) and could not be loaded"
expect "convert to Snappy (libsnappy missing)" "$snappy_msg" \
  "$floe" convert -s "$tmp/schema.json" -c snappy ev.ndjson -o snappy2
! ls snappy2/*.parquet > /dev/null 2>&1 || fail "convert left Parquet files without libsnappy"
expect "read a Snappy file (libsnappy missing)" "page at [0-9]+: $snappy_msg" \
  "$floe" cat snappy/part-00000.parquet

# libcrypto: an S3 request (payload hash, signature), a partition value longer than a
# path segment (cut and hashed)
unset FLOE_TEST_LAZYLIB_SONAME
crypto_msg="$missing is needed for SHA-256 and MD5 \\(S3 requests, long partition values, copied files, idempotency keys\\) and could not be loaded"
head -1 ev.ndjson |
  python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r["payload"]="x"*300; print(json.dumps(r))' \
    > long.ndjson
export FLOE_CATALOG_URI=$tmp/cat.db FLOE_WAREHOUSE=$tmp/wh
{ "$floe" namespace create db && "$floe" table create db.p --schema "$tmp/schema.json" \
  --partition payload; } > /dev/null 2>&1 || fail "cannot create table db.p"
export FLOE_TEST_LAZYLIB_SONAME=crypto=$missing
expect "a long partition value (libcrypto missing)" \
  "partition path: a segment longer than [0-9]+ bytes \\(cut and hashed\\): $crypto_msg" \
  "$floe" append db.p long.ndjson
unset FLOE_CATALOG_URI FLOE_WAREHOUSE
expect "S3 (libcrypto missing)" "HEAD s3://wh/t/metadata/v1.metadata.json: $crypto_msg" \
  env AWS_ACCESS_KEY_ID=a AWS_SECRET_ACCESS_KEY=b AWS_REGION=us-east-1 \
  AWS_ENDPOINT_URL_S3=http://127.0.0.1:$port "$floe" scan s3://wh/t/metadata/v1.metadata.json \
  --plan
# floe catalog serve: a request with an Idempotency-Key (its fingerprint is a SHA-256)
# is answered 500 with the message; one without is served
if command -v curl > /dev/null; then
  FLOE_CATALOG_URI=$tmp/rs.db FLOE_WAREHOUSE=$tmp/wh-rs "$floe" catalog serve \
    --listen 127.0.0.1:0 --port-file "$tmp/port-rs" > rs.log 2>&1 &
  rspid=$!
  for _ in $(seq 300); do [ -s "$tmp/port-rs" ] && break; sleep 0.1; done
  rsport=$(cat "$tmp/port-rs" 2> /dev/null || true)
  code=$(curl -s -o body -w '%{http_code}' -X POST -H 'content-type: application/json' \
    -H 'Idempotency-Key: 0b6f3a2e-1111-4222-8333-444455556666' -d '{"namespace":["a"]}' \
    "http://127.0.0.1:$rsport/v1/namespaces" || true)
  [ "$code" = 500 ] && grep -Eq "Idempotency-Key: $crypto_msg" body ||
    fail "catalog serve, Idempotency-Key (libcrypto missing): $code $(head -c 600 body 2> /dev/null) $(cat rs.log)"
  code=$(curl -s -o body -w '%{http_code}' -X POST -H 'content-type: application/json' \
    -d '{"namespace":["b"]}' "http://127.0.0.1:$rsport/v1/namespaces" || true)
  [ "$code" = 200 ] || fail "catalog serve without an Idempotency-Key (libcrypto missing): $code"
  kill "$rspid" 2> /dev/null || true
  wait "$rspid" 2> /dev/null || true
fi

# libicuuc (built with ICU: the program names its soname): placing a table folds its
# folder's name; nothing is created without it
if grep -aq 'libicuuc\.so\.[0-9]' "$floe"; then
  export FLOE_TEST_LAZYLIB_SONAME=icu=$missing
  expect "table create (libicuuc missing)" \
    "table db.q: $missing is needed for Unicode folding of table and namespace folders \\(placing a table or namespace\\) and could not be loaded" \
    env FLOE_CATALOG_URI=$tmp/cat.db FLOE_WAREHOUSE=$tmp/wh "$floe" table create db.q \
    --schema "$tmp/schema.json"
  unset FLOE_TEST_LAZYLIB_SONAME
  ! FLOE_CATALOG_URI=$tmp/cat.db FLOE_WAREHOUSE=$tmp/wh "$floe" table list db 2> /dev/null |
    grep -q 'db\.q' || fail "table db.q was created without libicuuc"
else
  echo "lazy_libs_missing: floe is built without ICU: the libicuuc check is skipped"
fi

# the setting itself
export FLOE_TEST_LAZYLIB_SONAME=nosuchlib=$missing
expect "an unknown library" "no lazily loaded library 'nosuchlib'" "$floe" scan db.t --plan

[ $fails = 0 ] || { echo "lazy_libs_missing: $fails checks failed"; exit 1; }
echo "lazy_libs_missing: ok"
