#!/usr/bin/env bash
# serve_partition_paths.sh - long and hostile partition values on S3 (issue 17 item 5):
# floe serve with an s3:// warehouse on the signature-checking S3 server of tests/js, which
# refuses object keys over 1024 bytes as AWS does (400 KeyTooLongError), and a SQLite
# catalog. Values of 0, 1, 255, 256, 4096 and 100,000 bytes, "/", "..", a NUL and 3,000
# slashes in an identity-partitioned string column:
#   - every event is acknowledged, lands once in the table with its exact value, and no
#     record went to the quarantine (/metrics);
#   - every object key written stays within 1024 bytes and every partition folder within
#     128 bytes;
#   - floe convert --partition and floe rewrite of the same values into S3 work too;
#   - a warehouse prefix so deep that partitioned keys could pass 1024 bytes: the table is
#     refused at its first post (400), nothing is acknowledged.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
command -v node > /dev/null || { echo "serve_partition_paths: SKIPPED (no node)"; exit 77; }
[ -d "$js/node_modules" ] || { echo "serve_partition_paths: SKIPPED (tests/js not set up)"; exit 77; }
serve_s3

cat > "$tmp/schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},
{"id":2,"name":"name","required":false,"type":"string"}]}
JSON
# the events: two per value
python3 - "$tmp/events.ndjson" <<'PY'
import json, sys
vals = ["a" * 0, "b", "c" * 255, "d" * 256, "e" * 4096, "f" * 100000, "/", "..", "x\0y", "/" * 3000]
with open(sys.argv[1], "w") as f:
    i = 0
    for v in vals:
        for _ in range(2):
            i += 1
            f.write(json.dumps({"id": i, "name": v}) + "\n")
PY

conf() { # WAREHOUSE CATALOG
  cat <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $1
catalog = $2
wal_dir = $tmp/wal
max_record = 2MB
compact = false
maintain = false
[table shop.t]
schema = $tmp/schema.json
partition = name
CONF
}

# 1: every value lands
conf s3://wh/pp "$tmp/catalog.db" > "$tmp/serve.conf"
start_server --config "$tmp/serve.conf"
code=$(curl -s -o "$tmp/ans.json" -w '%{http_code}' -XPOST -H 'Content-Type: application/x-ndjson' \
  --data-binary @"$tmp/events.ndjson" "http://127.0.0.1:$port/v1/tables/shop.t/events")
[ "$code" = 200 ] || fail "post: HTTP $code $(head -c 300 "$tmp/ans.json")"
grep -q '"accepted":20,"rejected":0' "$tmp/ans.json" || fail "post: $(head -c 300 "$tmp/ans.json")"
curl -sf -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=1" > /dev/null || fail "flush"
curl -sf "http://127.0.0.1:$port/metrics" > "$tmp/metrics"
grep -q '^floe_seal_quarantined_records_total 0$' "$tmp/metrics" || fail "records quarantined"
grep -q '^floe_pending_landing_files 0$' "$tmp/metrics" || fail "landing files left pending"
stop_server
FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=s3://wh/pp "$FLOE" scan shop.t \
  > "$tmp/got.ndjson" 2> "$tmp/scan.err" || fail "scan: $(cat "$tmp/scan.err")"
python3 - "$tmp/events.ndjson" "$tmp/got.ndjson" <<'PY' || fail "scan differs from the input"
import json, sys
want = sorted((json.loads(l)["id"], json.loads(l)["name"]) for l in open(sys.argv[1]))
got = sorted((json.loads(l)["id"], json.loads(l)["name"]) for l in open(sys.argv[2]))
if want != got:
    print("want %d rows, got %d" % (len(want), len(got)), file=sys.stderr)
    sys.exit(1)
PY
node "$js/s3_cli.mjs" ls wh pp/ > "$tmp/keys"
[ -s "$tmp/keys" ] || fail "nothing in the bucket"
python3 - "$tmp/keys" <<'PY' || fail "a key or folder is too long"
import sys
for k in open(sys.argv[1]):
    k = k.split()[0] if k.split() else k.strip()
    if len(k.encode()) > 1024:
        print("key of %d bytes: %s..." % (len(k.encode()), k[:80]), file=sys.stderr); sys.exit(1)
    for seg in k.split("/"):
        if seg.startswith("name=") and len(seg) > 128:
            print("folder of %d bytes" % len(seg), file=sys.stderr); sys.exit(1)
PY
[ "$(s3sig_failures)" = 0 ] || fail "requests with bad signatures"

# 2: floe convert --partition and floe rewrite write the same values to S3
FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=s3://wh/pp "$FLOE" rewrite shop.t \
  --option min-input-files=1 > "$tmp/rewrite.out" 2>&1 || fail "rewrite: $(tail -5 "$tmp/rewrite.out")"
FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=s3://wh/pp "$FLOE" scan shop.t \
  > "$tmp/got2.ndjson" 2> "$tmp/scan.err" || fail "scan after rewrite: $(cat "$tmp/scan.err")"
[ "$(wc -l < "$tmp/got2.ndjson")" = 20 ] || fail "rows after the rewrite: $(wc -l < "$tmp/got2.ndjson")"
"$FLOE" convert "$tmp/events.ndjson" -o s3://wh/conv --schema "$tmp/schema.json" \
  --partition name > "$tmp/convert.out" 2>&1 || fail "convert: $(tail -5 "$tmp/convert.out")"
node "$js/s3_cli.mjs" ls wh conv/ > "$tmp/conv.keys"
[ "$(grep -c parquet "$tmp/conv.keys")" -ge 10 ] || fail "convert wrote $(grep -c parquet "$tmp/conv.keys") files"

# 3: a warehouse prefix too deep for partitioned keys: the configured table is refused at
# start, before any event could be taken
deep=s3://wh/$(python3 -c 'print("/".join(["p" * 60] * 14))')
conf "$deep" "$tmp/catalog2.db" > "$tmp/deep.conf"
rc=0
timeout 60 "$FLOE" serve --config "$tmp/deep.conf" --port-file "$tmp/deep.port" \
  > /dev/null 2> "$tmp/deep.err" || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a table whose keys could pass 1024 bytes was served"
grep -q "object keys of" "$tmp/deep.err" || fail "no reason given: $(tail -3 "$tmp/deep.err")"
echo "serve_partition_paths: ok"
