#!/usr/bin/env bash
# s3_io.sh - `floe convert -o s3://...` and the readers on s3:// paths, against the
# signature-checking S3 server (tests/js/s3_sigcheck_server.mjs) and s3rver.
#
#  1. partitioned convert to s3://wh/out (keys with '='): every object is byte-identical
#     to the same convert written locally, the server saw no bad signature, and
#     `floe cat` / `floe inspect` read the objects back over ranged GETs;
#  2. a file larger than the part size goes out as a multipart upload, byte-identical,
#     and (through a server adding 300 ms to every answer) its parts go out in parallel;
#  3. malformed input with a quarantine on s3:// keeps the counts;
#  4. the same convert against s3rver reads back row for row;
#  5. a wrong secret fails with exit 1 and a message naming the status and the S3 code.
# The API-level tests (ranges, multipart, abort, create-if-absent, pagination, faults) are
# in tests/unit/test_s3_io.c.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "s3_io: FAIL: $*" >&2; exit 1; }

start() { # name script args... ; sets port_<name>
  local name=$1 script=$2; shift 2
  node "$js/$script" "$@" > "$tmp/$name.port" 2> "$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$tmp/$name.port" ] && break
    sleep 0.1
  done
  local port
  port=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).port)' \
    "$tmp/$name.port") || fail "$name did not start: $(cat "$tmp/$name.err")"
  eval "port_$name=$port"
}
start sig s3_sigcheck_server.mjs --access-key AKIDFLOETEST --secret floe-test-secret --bucket wh
start s3rver s3rver_start.mjs --bucket wh

use() { # port access-key secret
  export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$1 AWS_ACCESS_KEY_ID=$2 AWS_SECRET_ACCESS_KEY=$3
  export AWS_REGION=us-east-1 FLOE_S3_PART_SIZE=5MiB FLOE_S3_RETRY_BASE_MS=5
}
fetch() { # key file: raw bytes from the signature-checking server
  curl -sf "http://127.0.0.1:$port_sig/__admin/object?bucket=wh&key=$(node -e \
    'console.log(encodeURIComponent(process.argv[1]))' "$1")" -o "$2"
}
stat_field() { curl -sf "http://127.0.0.1:$port_sig/__admin/stats" | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const j = JSON.parse(s); const v = process.argv[1].split(".").reduce((o, k) => o?.[k], j);
    console.log(Array.isArray(v) ? v.length : v ?? 0) })' "$1"; }

schema=$src/tests/data/events.schema.json
"$floe" gen --seed 5 --count 6000 -o "$tmp/ev.ndjson" > /dev/null

# 1. partitioned convert, s3 vs local
use "$port_sig" AKIDFLOETEST floe-test-secret
"$floe" convert --schema "$schema" -j 2 -p 'event_type' --json "$tmp/ev.ndjson" -o s3://wh/out \
  > "$tmp/s3.json" || fail "convert to s3://wh/out"
"$floe" convert --schema "$schema" -j 2 -p 'event_type' "$tmp/ev.ndjson" -o "$tmp/local" > /dev/null
n=0
while IFS= read -r f; do
  rel=${f#"$tmp/local/"}
  fetch "out/$rel" "$tmp/got.parquet" || fail "object out/$rel missing"
  cmp -s "$f" "$tmp/got.parquet" || fail "out/$rel differs from the local convert"
  "$floe" cat "s3://wh/out/$rel" > "$tmp/cat.s3" || fail "floe cat s3://wh/out/$rel"
  "$floe" cat "$f" > "$tmp/cat.local"
  cmp -s "$tmp/cat.s3" "$tmp/cat.local" || fail "floe cat differs for $rel"
  n=$((n + 1))
done < <(find "$tmp/local" -name '*.parquet' | sort)
[ "$n" -ge 4 ] || fail "expected several partition files, got $n"
grep -q 's3://wh/out/event_type=' "$tmp/s3.json" || fail "summary does not list s3:// files"
"$floe" inspect --json "s3://wh/out/$rel" > /dev/null || fail "floe inspect on s3://"
[ "$(stat_field sigFailures)" = 0 ] || fail "the server saw bad signatures"

# 2. one file larger than the 5 MiB part size: multipart upload
"$floe" gen --seed 6 --count 40000 -o "$tmp/big.ndjson" > /dev/null
"$floe" convert --schema "$schema" -j 2 -c none "$tmp/big.ndjson" -o s3://wh/big > /dev/null ||
  fail "convert to s3://wh/big"
"$floe" convert --schema "$schema" -j 2 -c none "$tmp/big.ndjson" -o "$tmp/big" > /dev/null
size=$(stat -c %s "$tmp/big/part-00000.parquet")
[ "$size" -gt $((5 * 1024 * 1024)) ] || fail "test file only $size bytes: not multipart"
fetch big/part-00000.parquet "$tmp/big.got" || fail "big object missing"
cmp -s "$tmp/big/part-00000.parquet" "$tmp/big.got" || fail "multipart object differs"
[ "$(stat_field byOp.CompleteMultipartUpload)" -ge 1 ] || fail "no multipart upload was used"
[ "$(stat_field pendingUploads)" = 0 ] || fail "multipart uploads left pending"
"$floe" cat --count s3://wh/big/part-00000.parquet > "$tmp/count" || fail "cat big"
[ "$(cat "$tmp/count")" = 40000 ] || fail "big file has $(cat "$tmp/count") rows"

# 2b. the parts of one multipart upload go out in parallel: through a server answering
# every request 300 ms late, one writer thread (-j 1) still has two requests in flight
# (the part before the last in the background while the last is sent)
start lat s3_sigcheck_server.mjs --access-key AKIDFLOETEST --secret floe-test-secret --bucket wh \
  --latency-ms 300
use "$port_lat" AKIDFLOETEST floe-test-secret
"$floe" convert --schema "$schema" -j 1 -c none "$tmp/big.ndjson" -o s3://wh/big > /dev/null ||
  fail "convert to s3://wh/big through the slow server"
lat_max=$(curl -sf "http://127.0.0.1:$port_lat/__admin/stats" | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).inFlightMax))')
curl -sf "http://127.0.0.1:$port_lat/__admin/object?bucket=wh&key=big%2Fpart-00000.parquet" -o "$tmp/big.lat" ||
  fail "big object missing on the slow server"
cmp -s "$tmp/big/part-00000.parquet" "$tmp/big.lat" || fail "multipart object differs (slow server)"
[ "$lat_max" -ge 2 ] || fail "one writer had at most $lat_max request in flight (want 2: parts in parallel)"
use "$port_sig" AKIDFLOETEST floe-test-secret

# 3. malformed input, quarantine on s3://
"$floe" gen --seed 7 --count 2000 --malformed-rate 0.05 --malformed-lines "$tmp/bad.txt" \
  -o "$tmp/bad.ndjson" > /dev/null
nbad=$(wc -l < "$tmp/bad.txt")
"$floe" convert --schema "$schema" --json "$tmp/bad.ndjson" -o s3://wh/q > "$tmp/q.json" ||
  fail "convert with rejects"
node -e '
  const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (s.rejected !== Number(process.argv[2]) || s.records_out !== 2000 - s.rejected) process.exit(1)
' "$tmp/q.json" "$nbad" || fail "quarantine counts: $(cat "$tmp/q.json")"
fetch q/_quarantine/quarantine.ndjson "$tmp/q.ndjson" || fail "no quarantine object"
[ "$(wc -l < "$tmp/q.ndjson")" = "$nbad" ] || fail "quarantine object has the wrong count"

# 4. s3rver: an independent server
use "$port_s3rver" S3RVER S3RVER
"$floe" convert --schema "$schema" -p 'event_type' "$tmp/ev.ndjson" -o s3://wh/out > /dev/null ||
  fail "convert to s3rver"
while IFS= read -r f; do
  rel=${f#"$tmp/local/"}
  "$floe" cat "s3://wh/out/$rel" > "$tmp/cat.s3" || fail "floe cat from s3rver: $rel"
  "$floe" cat "$f" > "$tmp/cat.local"
  cmp -s "$tmp/cat.s3" "$tmp/cat.local" || fail "s3rver copy of $rel reads differently"
done < <(find "$tmp/local" -name '*.parquet' | sort)

# 5. a wrong secret: exit 1, and the message says why
use "$port_sig" AKIDFLOETEST not-the-secret
if "$floe" convert --schema "$schema" "$tmp/ev.ndjson" -o s3://wh/denied > /dev/null 2> "$tmp/denied.err"; then
  fail "convert with a wrong secret succeeded"
fi
grep -q "403" "$tmp/denied.err" && grep -q "SignatureDoesNotMatch" "$tmp/denied.err" ||
  fail "error does not name the status and code: $(cat "$tmp/denied.err")"
echo "s3_io: ok"
