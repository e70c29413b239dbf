#!/usr/bin/env bash
# lazy_libs.sh - issue 22 (planning at a million files, process start): the floe program
# does not link libcurl, libpq, librdkafka or libmicrohttpd (with GnuTLS, Kerberos, LDAP
# and the rest they pull in, ~30 ms of every command's start); src/common/lazylib.c loads
# each when first called. Checks that none is among the program's DT_NEEDED, and that
# the commands which need libcurl (S3, a REST catalog) and libpq (a PostgreSQL catalog)
# still load and call them: their errors are the libraries' own (connection refused),
# not a failure to load.
set -euo pipefail
floe=$(realpath "${FLOE_BIN:?FLOE_BIN}")
command -v readelf > /dev/null || { echo "lazy_libs: readelf missing; skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

readelf -d "$floe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$tmp/needed"
[ -s "$tmp/needed" ] || fail "readelf -d $floe lists no NEEDED libraries"
for lib in libcurl libpq librdkafka libmicrohttpd; do
  ! grep -q "^$lib\.so" "$tmp/needed" || fail "$floe links $lib: $(grep "^$lib\.so" "$tmp/needed")"
done

# a port nothing listens on
port=9
cd "$tmp"
rc=0
AWS_ACCESS_KEY_ID=a AWS_SECRET_ACCESS_KEY=b AWS_REGION=us-east-1 \
  AWS_ENDPOINT_URL_S3=http://127.0.0.1:$port "$floe" scan s3://wh/t/metadata/v1.metadata.json \
  --plan > out 2> err || rc=$?
[ $rc = 1 ] && grep -q "Couldn't connect to server" err ||
  fail "S3 (libcurl): exit $rc, $(cat err)"
rc=0
FLOE_CATALOG_URI=http://127.0.0.1:$port/ FLOE_CATALOG=c "$floe" scan db.t --plan > out 2> err ||
  rc=$?
[ $rc = 1 ] && grep -q "Couldn't connect to server" err ||
  fail "REST catalog (libcurl): exit $rc, $(cat err)"
rc=0
FLOE_CATALOG_URI=postgresql://127.0.0.1:$port/x FLOE_CATALOG=c FLOE_WAREHOUSE=$tmp \
  "$floe" scan db.t --plan > out 2> err || rc=$?
[ $rc = 1 ] && grep -q "Connection refused" err ||
  fail "PostgreSQL catalog (libpq): exit $rc, $(cat err)"
! grep -q 'could not be loaded' err || fail "a library did not load: $(cat err)"

[ $fails = 0 ] || { echo "lazy_libs: $fails checks failed"; exit 1; }
echo "lazy_libs: ok"
