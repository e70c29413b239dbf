#!/usr/bin/env bash
# serve_staging_sweep.sh - the compactor's staging folders (<TMPDIR>/floe-compact-XXXXXX,
# local copies of landing files in an s3:// warehouse) never stay behind:
#   1. floe serve on an s3:// warehouse (the signature-checking S3 server of tests/js) and
#      a SQLite catalog, TMPDIR a folder of this test: 14 events posted, flushed and
#      compacted - every event is in the table, and no floe-compact-* folder of the server
#      is left in TMPDIR (the compaction staged its landing files there);
#   2. folders a killed process left (over a minute old, nobody holding their lock, only
#      staged files inside) are removed when the compactor starts; a folder whose lock a
#      live process holds (this script), one made a moment ago, and one holding a file that is not a
#      staged copy are kept.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
command -v node > /dev/null || { echo "serve_staging_sweep: SKIPPED (no node)"; exit 77; }
command -v flock > /dev/null || { echo "serve_staging_sweep: SKIPPED (no flock)"; exit 77; }
[ -d "$js/node_modules" ] || { echo "serve_staging_sweep: SKIPPED (tests/js not set up)"; exit 77; }
serve_s3

stage=$tmp/stage
mkdir -p "$stage"
export TMPDIR=$stage
cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}
JSON
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = s3://wh/st
catalog = $tmp/catalog.db
wal_dir = $tmp/wal
compact = false
maintain = false
[table shop.t]
schema = $tmp/schema.json
CONF

# 2's folders, made before the server starts
old() { touch -d '-5 minutes' "$@"; }
mkdir "$stage/floe-compact-dead01" "$stage/floe-compact-dead02" "$stage/floe-compact-held01" \
      "$stage/floe-compact-young1" "$stage/floe-compact-other1"
printf '{"id":1}\n' > "$stage/floe-compact-dead01/0.ndjson.zst"
printf '{"id":1}\n' > "$stage/floe-compact-dead01/12.ndjson.zst"
printf '{"id":1}\n' > "$stage/floe-compact-held01/0.ndjson.zst"
printf 'mine\n' > "$stage/floe-compact-other1/notes.txt"
old "$stage/floe-compact-dead01" "$stage/floe-compact-dead02" "$stage/floe-compact-held01" \
    "$stage/floe-compact-other1"
# this shell holds held01's lock (as a live compactor would) until it exits
exec 9<"$stage/floe-compact-held01"
flock -n 9 || fail "could not lock floe-compact-held01"

start_server --config "$tmp/serve.conf"
wait_for 10 '[ ! -e "$stage/floe-compact-dead02" ]' || true # the sweep runs as the server starts
before=$(stat -c %y "$stage")
for i in $(seq 1 14); do printf '{"id":%d}\n' "$i"; done > "$tmp/ev.ndjson"
code=$(curl -s -o "$tmp/ans.json" -w '%{http_code}' -XPOST -H 'Content-Type: application/x-ndjson' \
  --data-binary @"$tmp/ev.ndjson" "http://127.0.0.1:$port/v1/tables/shop.t/events")
[ "$code" = 200 ] || fail "post: HTTP $code $(head -c 300 "$tmp/ans.json")"
flush_wait
curl -sf "http://127.0.0.1:$port/metrics" > "$tmp/metrics"
grep -q '^floe_pending_landing_files 0$' "$tmp/metrics" || fail "landing files left pending"
stop_server
# the rounds staged their landing files in TMPDIR: folders were made there (and removed)
[ "$(stat -c %y "$stage")" != "$before" ] || fail "nothing was staged in TMPDIR: the check is void"
FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=s3://wh/st "$FLOE" scan shop.t --columns id \
  > "$tmp/got.ndjson" 2> "$tmp/scan.err" || fail "scan: $(cat "$tmp/scan.err")"
[ "$(wc -l < "$tmp/got.ndjson")" = 14 ] || fail "scan: $(wc -l < "$tmp/got.ndjson") rows, want 14"

left=$(cd "$stage" && ls -d floe-compact-* 2>/dev/null | sort | tr '\n' ' ')
[ "$left" = "floe-compact-held01 floe-compact-other1 floe-compact-young1 " ] ||
  fail "staging folders left in TMPDIR: '$left' (want the held, foreign and young ones only)"
[ -f "$stage/floe-compact-held01/0.ndjson.zst" ] || fail "the held folder's file was deleted"
[ -f "$stage/floe-compact-other1/notes.txt" ] || fail "the foreign file was deleted"
[ "$(s3sig_failures)" = 0 ] || fail "the S3 server saw bad signatures"
echo "serve_staging_sweep: ok"
