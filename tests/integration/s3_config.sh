#!/usr/bin/env bash
# s3_config.sh - the S3 settings of the floe command from each of its sources, against the
# signature-checking S3 server (tests/js/s3_sigcheck_server.mjs): a file written to and
# read back from s3://wh/ with the endpoint and keys only in .pyiceberg.yaml, only in
# floe.conf, only in --s3-* flags, and with a wrong key in each lower-precedence source
# under the right one (flags > environment > floe.conf > .pyiceberg.yaml, docs/CONFIG.md);
# then floe serve --config with the settings in its [server] section, in floe.conf's place.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
command -v node > /dev/null || { echo "s3_config: SKIP: node not found" >&2; exit 77; }
tmp=$(mktemp -d)
# the staging folders (floe-compact-*) of the floe processes this test kills go with $tmp
export TMPDIR=$tmp
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  [ -n "${spid:-}" ] && kill -9 "$spid" 2>/dev/null || true
  wait 2>/dev/null || true
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

# floe serve --config: the [server] s3.* keys build the server's I/O context, in the floe
# config file's place (over .pyiceberg.yaml, under the environment and the flags)
clear
servecfg() { # secret [extra [server] line]
  cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = s3://wh/srv$n
catalog = $tmp/srv$n.db
wal_dir = $tmp/wal$n
maintain = false
s3.endpoint = $ep
s3.region = us-east-1
s3.access-key-id = AKIDFLOETEST
s3.secret-access-key = $1
${2:-}
[table shop.ev]
schema = $schema
CONF
}
spid=
serve_start() { # floe serve args...
  rm -f "$tmp/port"
  "$floe" serve "$@" --config "$tmp/serve.conf" --port-file "$tmp/port" 2> "$tmp/serve.log" &
  spid=$!
  for _ in $(seq 400); do
    [ -s "$tmp/port" ] && return 0
    kill -0 "$spid" 2> /dev/null || { wait "$spid" || true; spid=; return 1; }
    sleep 0.05
  done
  fail "floe serve did not start: $(tail -5 "$tmp/serve.log")"
}
serve_stop() {
  kill -TERM "$spid"
  wait "$spid" || fail "floe serve exit status $?: $(tail -5 "$tmp/serve.log")"
  spid=
}
served() { # label, floe serve args...: 200 events posted, compacted into s3://wh/srvN
  local label=$1 sport; shift
  serve_start "$@" || fail "$label: floe serve exited at start: $(tail -5 "$tmp/serve.log")"
  sport=$(cat "$tmp/port")
  curl -sf -XPOST -H 'Content-Type: application/x-ndjson' --data-binary @"$tmp/ev.ndjson" \
    "http://127.0.0.1:$sport/v1/tables/shop.ev/events" > "$tmp/ans.json" \
    || fail "$label: post: $(tail -5 "$tmp/serve.log")"
  curl -s -XPOST "http://127.0.0.1:$sport/v1/admin/flush?wait=true&timeout=60" > "$tmp/flush.json"
  grep -q '"complete":true' "$tmp/flush.json" \
    || fail "$label: flush: $(cat "$tmp/flush.json") $(tail -5 "$tmp/serve.log")"
  serve_stop
  FLOE_CATALOG_URI=$tmp/srv$n.db FLOE_WAREHOUSE=s3://wh/srv$n "$floe" scan shop.ev \
    --s3-endpoint "$ep" --s3-access-key-id AKIDFLOETEST --s3-secret-access-key floe-test-secret \
    > "$tmp/scan.ndjson" 2> "$tmp/err" || fail "$label: scan: $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/scan.ndjson")" = 200 ] || fail "$label: $(wc -l < "$tmp/scan.ndjson") rows"
  n=$((n + 1))
}
serve_refused() { # label, floe serve args...: the wrong key fails the start or the flush
  local label=$1 sport; shift
  if serve_start "$@"; then
    sport=$(cat "$tmp/port")
    curl -s -XPOST -H 'Content-Type: application/x-ndjson' --data-binary @"$tmp/ev.ndjson" \
      "http://127.0.0.1:$sport/v1/tables/shop.ev/events" > /dev/null || true
    curl -s -XPOST "http://127.0.0.1:$sport/v1/admin/flush?wait=true&timeout=5" > "$tmp/flush.json" || true
    grep -q '"complete":true' "$tmp/flush.json" && fail "$label: a wrong key was accepted"
    kill -TERM "$spid"; wait "$spid" || true; spid=
  fi
  grep -q 'SignatureDoesNotMatch\|403\|InvalidAccessKeyId' "$tmp/serve.log" \
    || fail "$label: no S3 refusal in: $(tail -5 "$tmp/serve.log")"
  n=$((n + 1))
}
servecfg floe-test-secret
served "serve config only"
pyyaml wrong-secret; servecfg floe-test-secret
served "serve config over .pyiceberg.yaml"
clear; servecfg wrong-secret
AWS_SECRET_ACCESS_KEY=floe-test-secret AWS_ACCESS_KEY_ID=AKIDFLOETEST \
  served "environment over the serve config"
servecfg wrong-secret
served "flags over the serve config" --s3-secret-access-key floe-test-secret
servecfg floe-test-secret
serve_refused "flags wrong over the serve config right" --s3-secret-access-key=wrong-secret
servecfg floe-test-secret "s3.force-virtual-addressing = maybe"
if "$floe" serve --config "$tmp/serve.conf" 2> "$tmp/err"; then fail "a bad s3 setting accepted"; fi
grep -q 's3.force-virtual-addressing=maybe' "$tmp/err" || fail "bad s3 setting: $(cat "$tmp/err")"
echo "s3_config: ok ($n round trips)"
