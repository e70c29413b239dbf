# tests/lib/s3sig.sh - the signature-checking S3 server of tests/js (s3_sigcheck_server.mjs)
# for tests. Source it, then:
#
#   s3sig_start DIR || fail ...  # start it with one bucket "wh"; DIR keeps its port file
#                                # and stderr (sig.port, sig.err)
#   ... $S3SIG_PORT ...          # its port; AWS_ENDPOINT_URL_S3, the access key pair,
#                                # AWS_REGION and FLOE_S3_RETRY_BASE_MS=5 are exported
#   s3sig_failures               # how many requests so far carried a bad signature
#
# S3SIG_ARGS (optional): more arguments for the server, e.g. "--latency-ms 100".
#
# The server accepts only requests signed with AKIDFLOETEST / floe-test-secret (SigV4), so
# a test that ends with s3sig_failures = 0 proves floe signed every request it made.
# s3sig_stop (chained onto the EXIT trap by s3sig_start) stops it.

s3sig_start() {
  local dir=$1 js
  js=$(cd "$(dirname "${BASH_SOURCE[0]}")/../js" && pwd)
  node "$js/s3_sigcheck_server.mjs" --access-key AKIDFLOETEST --secret floe-test-secret \
    --bucket wh ${S3SIG_ARGS:-} > "$dir/sig.port" 2> "$dir/sig.err" &
  S3SIG_PID=$!
  S3SIG_PREV_TRAP=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
  trap 's3sig_stop; eval "$S3SIG_PREV_TRAP"' EXIT
  local _
  for _ in $(seq 100); do [ -s "$dir/sig.port" ] && break; sleep 0.1; done
  S3SIG_PORT=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).port)' \
    "$dir/sig.port" 2>/dev/null) || { echo "S3 server did not start: $(cat "$dir/sig.err")" >&2; return 1; }
  export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$S3SIG_PORT AWS_ACCESS_KEY_ID=AKIDFLOETEST
  export AWS_SECRET_ACCESS_KEY=floe-test-secret AWS_REGION=us-east-1 FLOE_S3_RETRY_BASE_MS=5
  export S3SIG_PORT
}

s3sig_failures() {
  curl -sf "http://127.0.0.1:$S3SIG_PORT/__admin/stats" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).sigFailures))'
}

s3sig_stop() {
  [ -n "${S3SIG_PID:-}" ] || return 0
  kill "$S3SIG_PID" 2>/dev/null || true
  wait "$S3SIG_PID" 2>/dev/null || true
  S3SIG_PID=
}
