#!/usr/bin/env bash
# s3_config.sh - the S3 settings of the floe command from each of its sources, against the
# signature-checking S3 server (tests/js/s3_sigcheck_server.mjs): a file written to and
# read back from s3://wh/ with the endpoint and keys only in .pyiceberg.yaml, only in
# floe.conf, only in --s3-* flags, and with a wrong key in each lower-precedence source
# under the right one (flags > environment > floe.conf > .pyiceberg.yaml, docs/CONFIG.md).
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node > /dev/null || { echo "s3_config: SKIP: node not found" >&2; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "s3_config: FAIL: $*" >&2; exit 1; }

node "$js/s3_sigcheck_server.mjs" --access-key AKIDFLOETEST --secret floe-test-secret \
  --bucket wh > "$tmp/sig.port" 2> "$tmp/sig.err" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/sig.port" ] && break; sleep 0.1; done
port=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).port)' \
  "$tmp/sig.port") || { echo "s3_config: SKIP: S3 test server did not start: $(cat "$tmp/sig.err")" >&2; exit 77; }
ep=http://127.0.0.1:$port

# No S3 setting may leak in from the caller's environment or home.
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_ENDPOINT_URL \
  AWS_ENDPOINT_URL_S3 AWS_REGION AWS_DEFAULT_REGION AWS_PROFILE FLOE_CONFIG FLOE_CATALOG \
  FLOE_S3_ADDRESSING AWS_S3_FORCE_PATH_STYLE
export HOME=$tmp/home PYICEBERG_HOME=$tmp/py FLOE_S3_RETRY_MAX_ATTEMPTS=1
mkdir -p "$HOME" "$PYICEBERG_HOME" "$tmp/run"
cd "$tmp/run"

schema=$src/tests/data/events.schema.json
"$floe" gen --seed 3 --count 200 -o "$tmp/ev.ndjson" > /dev/null
"$floe" convert --schema "$schema" "$tmp/ev.ndjson" -o "$tmp/local" > /dev/null
"$floe" cat "$tmp/local/part-00000.parquet" > "$tmp/want.txt"

pyyaml() { # secret
  cat > "$PYICEBERG_HOME/.pyiceberg.yaml" <<YAML
catalog:
  default:
    uri: sqlite:///$tmp/cat.db
    s3.endpoint: $ep
    s3.region: us-east-1
    s3.access-key-id: AKIDFLOETEST
    s3.secret-access-key: $1
YAML
}
floeconf() { # secret
  cat > "$tmp/run/floe.conf" <<CONF
[catalog.default]
uri = sqlite:///$tmp/cat.db
s3.endpoint = $ep
s3.region = us-east-1
s3.access-key-id = AKIDFLOETEST
s3.secret-access-key = $1
CONF
}
clear() { rm -f "$PYICEBERG_HOME/.pyiceberg.yaml" "$tmp/run/floe.conf"; }
n=0
roundtrip() { # label, floe args before the command's own...
  local label=$1; shift
  n=$((n + 1))
  "$floe" convert "$@" --schema "$schema" "$tmp/ev.ndjson" -o "s3://wh/t$n" \
    > /dev/null 2> "$tmp/err" || fail "$label: convert to s3://: $(cat "$tmp/err")"
  "$floe" cat "$@" "s3://wh/t$n/part-00000.parquet" > "$tmp/got.txt" 2> "$tmp/err" \
    || fail "$label: cat s3://: $(cat "$tmp/err")"
  cmp -s "$tmp/want.txt" "$tmp/got.txt" || fail "$label: rows differ"
}
refused() { # label, floe args...
  local label=$1; shift
  if "$floe" cat "$@" "s3://wh/t1/part-00000.parquet" > /dev/null 2> "$tmp/err"; then
    fail "$label: a wrong key was accepted"
  fi
  grep -q 'SignatureDoesNotMatch\|403\|InvalidAccessKeyId' "$tmp/err" \
    || fail "$label: no S3 refusal in: $(cat "$tmp/err")"
}

# each source on its own
clear; pyyaml floe-test-secret
roundtrip ".pyiceberg.yaml only"
clear; floeconf floe-test-secret
roundtrip "floe.conf only"
clear
roundtrip "flags only" --s3-endpoint "$ep" --s3-region us-east-1 \
  --s3-access-key-id AKIDFLOETEST --s3-secret-access-key=floe-test-secret
# the wrong key alone is refused, so the cases below test the precedence
clear; pyyaml wrong-secret
refused "wrong key in .pyiceberg.yaml"

# precedence: the wrong key in the lower source, the right one in the higher
clear; pyyaml wrong-secret; floeconf floe-test-secret
roundtrip "floe.conf over .pyiceberg.yaml"
clear; floeconf wrong-secret
AWS_SECRET_ACCESS_KEY=floe-test-secret AWS_ACCESS_KEY_ID=AKIDFLOETEST \
  roundtrip "environment over floe.conf"
AWS_SECRET_ACCESS_KEY=wrong-secret AWS_ACCESS_KEY_ID=AKIDFLOETEST \
  roundtrip "flags over environment" --s3-access-key-id AKIDFLOETEST \
  --s3-secret-access-key floe-test-secret
# the same wrong key in the higher source wins over the right one in the lower
clear; pyyaml floe-test-secret; floeconf wrong-secret
refused "floe.conf wrong over .pyiceberg.yaml right"
clear; floeconf floe-test-secret
refused "flags wrong over floe.conf right" --s3-secret-access-key wrong-secret

# the catalog named (--catalog, else FLOE_CATALOG) picks the entry whose settings apply
clear; cat > "$tmp/run/floe.conf" <<CONF
[catalog.default]
s3.endpoint = $ep
s3.access-key-id = AKIDFLOETEST
s3.secret-access-key = wrong-secret
[catalog.lake]
s3.endpoint = $ep
s3.access-key-id = AKIDFLOETEST
s3.secret-access-key = floe-test-secret
CONF
refused "default entry"
n=$((n + 1))
FLOE_CATALOG=lake "$floe" cat "s3://wh/t1/part-00000.parquet" > "$tmp/got.txt" 2> "$tmp/err" \
  || fail "FLOE_CATALOG=lake: $(cat "$tmp/err")"
cmp -s "$tmp/want.txt" "$tmp/got.txt" || fail "FLOE_CATALOG=lake: rows differ"
if "$floe" cat --s3-region > /dev/null 2>&1; then fail "--s3-region without a value accepted"; fi
echo "s3_config: ok ($n round trips)"
