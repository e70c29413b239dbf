#!/usr/bin/env bash
# Kafka source: a batch whose first record starts with a compression format's magic bytes.
# The spool of a table's batch is plain NDJSON, whatever its first bytes: a message of
# gzip (1f 8b), zstd (28 b5 2f fd) or LZ4 frame (04 22 4d 18) magic bytes, taken first
# into a batch, is a record like any other (not JSON: quarantined with its topic,
# partition and offset), not a compressed spool the whole batch fails to decode (the
# partition would then be blocked, every commit failing on it). Three topics of one
# partition, each starting with one such message and followed by 400 events (one more
# such message among them), each into its own table: every table ends with exactly its
# events, once, and the quarantine with exactly the two messages of each topic.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
seed=40
for c in gz zs lz; do
  seed=$((seed + 1))
  "$FLOE" gen --count 400 --seed $seed -o "$tmp/ev-$c.ndjson" >/dev/null
done
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
magic = {"gz": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03 not json",
         "zs": b"\x28\xb5\x2f\xfd\x20\x00 not json",
         "lz": b"\x04\x22\x4d\x18\x64\x40 not json"}
for c, m in magic.items():
    ev = open(f"{d}/ev-{c}.ndjson", "rb").read().split(b"\n")[:400]
    # the magic message first (the first record of the first batch), another at line 202
    lines = [m] + ev[:200] + [m + b" again"] + ev[200:]
    open(f"{d}/m-{c}.ndjson", "wb").write(b"\n".join(lines) + b"\n")
    open(f"{d}/bad-{c}", "w").write("1\n202\n")
PY
mock_start 3
{
  cat <<CONF
$(server_section a)
$(source_section magic "m-gz, m-zs, m-lz" magic "raw.{topic}" commit_interval=1s)
CONF
  for c in gz zs lz; do printf '[table raw.m-%s]\nschema = %s\n' "$c" "$tmp/schema.json"; done
} > "$tmp/a.conf"
for c in gz zs lz; do mock topic "m-$c" 1; mock produce "m-$c" "$tmp/m-$c.ndjson" none; done
node_start a "$tmp/a.conf"
for c in gz zs lz; do wait_rows "raw.m-$c" 400 120; done
sleep 2 # anything taken twice would show up now
node_stop a
for c in gz zs lz; do
  python3 "$KAFKA_DIR/verify.py" "$tmp/wh" "raw.m-$c" "$FLOE" magic "$tmp/m-$c.ndjson" \
    "$tmp/bad-$c" || fail "raw.m-$c"
done
! grep -q "bad \(gzip\|zstd\|lz4\) data" "$tmp/node-a.log" || fail "the spool was decoded: $(grep -m1 "bad .* data" "$tmp/node-a.log")"
echo "kafka_spool_magic: ok"
