#!/usr/bin/env bash
# lazy_libs.sh - issue 22 (planning at a million files, process start): the floe program
# does not link libcurl, libpq, librdkafka or libmicrohttpd (with GnuTLS, Kerberos, LDAP
# and the rest they pull in, ~30 ms of every command's start), nor libsnappy (C++: it
# brought libstdc++ and libgcc_s), libcrypto or ICU's libicuuc (~10 ms more);
# src/common/lazylib.c loads each when first called. Checks that none is among the
# program's DT_NEEDED nor loaded at its start (ldd), and that the commands which need
# libcurl (S3, a REST catalog), libpq (a PostgreSQL catalog), libsnappy (a Snappy
# convert, read back), libcrypto (a long partition value's hash) and libicuuc (placing
# a table) still load and call them: the S3 and catalog errors are the libraries' own
# (connection refused), not a failure to load.
set -euo pipefail
floe=$(realpath "${FLOE_BIN:?FLOE_BIN}")
command -v readelf > /dev/null || { echo "lazy_libs: readelf missing; skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

readelf -d "$floe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$tmp/needed"
[ -s "$tmp/needed" ] || fail "readelf -d $floe lists no NEEDED libraries"
for lib in libcurl libpq librdkafka libmicrohttpd libsnappy libcrypto libicuuc libicudata \
  'libstdc++'; do
  ! grep -qF "$lib.so" "$tmp/needed" || fail "$floe links $lib: $(grep -F "$lib.so" "$tmp/needed")"
done
# and nothing the program links brings them in (ldd: the whole start-up set; the
# sanitizers' runtimes bring libstdc++ into a sanitized build)
if command -v ldd > /dev/null; then
  ldd "$floe" > "$tmp/ldd" 2>&1 || true
  stdcxx='libstdc++'
  ! grep -Eq 'lib(a|ub)san\.so' "$tmp/ldd" || stdcxx=
  for lib in libcurl libpq librdkafka libmicrohttpd libsnappy libcrypto libicuuc $stdcxx; do
    ! grep -qF "$lib.so" "$tmp/ldd" || fail "$floe loads $lib at start (ldd): $(grep -F "$lib.so" "$tmp/ldd")"
  done
fi

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

# libsnappy (convert's default codec), libcrypto (a partition value longer than a path
# segment is cut and hashed) and libicuuc (placing a table) load when used
unset FLOE_CATALOG_URI FLOE_CATALOG FLOE_WAREHOUSE || true
"$floe" gen --schema-out schema.json > /dev/null
"$floe" gen --count 50 -o ev.ndjson > /dev/null 2>&1
rc=0
"$floe" convert -s schema.json -c snappy ev.ndjson -o snappy > out 2> err || rc=$?
[ $rc = 0 ] || fail "Snappy convert (libsnappy): exit $rc, $(cat err)"
n=$("$floe" cat snappy/part-00000.parquet 2> err | wc -l) || true
[ "$n" = 50 ] || fail "Snappy file read back: $n rows, want 50: $(cat err)"
head -1 ev.ndjson | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r["payload"]="x"*300; print(json.dumps(r))' > long.ndjson
export FLOE_CATALOG_URI=$tmp/cat.db FLOE_WAREHOUSE=$tmp/wh
rc=0
{ "$floe" namespace create db && "$floe" table create db.p --schema schema.json --partition payload &&
  "$floe" append db.p long.ndjson; } > out 2> err || rc=$?
[ $rc = 0 ] || fail "table create (libicuuc) and a long partition value (libcrypto): exit $rc, $(cat err)"
grep -q 'payload=x*~[0-9a-f]\{24\}/' <<< "$("$floe" files db.p 2> err)" ||
  fail "the long partition value's folder is not cut and hashed: $("$floe" files db.p 2>&1)"
unset FLOE_CATALOG_URI FLOE_WAREHOUSE

[ $fails = 0 ] || { echo "lazy_libs: $fails checks failed"; exit 1; }
echo "lazy_libs: ok"
