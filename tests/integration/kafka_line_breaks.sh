#!/usr/bin/env bash
# Kafka source: line breaks inside a message (format = json). A record's line breaks are
# blanked into spaces in the spool (one line per record), which is right between the
# tokens of a pretty-printed object but not inside a string, where JSON wants them
# escaped: there the record is malformed, and blanked it would be a valid one of other
# content. Among 300 generated events on a topic of 2 partitions: events with a raw CR in
# the payload, events pretty-printed with CR and tabs between the members, and messages
# that are not objects and hold CR bytes (text, binary). The table holds every valid
# event once with its content (the pretty-printed ones too, the raw-CR ones not); the
# quarantine holds each malformed message once, as its exact bytes, with its offset.
set -euo pipefail
source "$(dirname "$0")/../kafka/lib.sh"
export FLOE_LOG=info
"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 300 --seed 41 -o "$tmp/gen.ndjson" >/dev/null
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
out, bad = [], []
for i, l in enumerate(open(f"{d}/gen.ndjson", "rb").read().split(b"\n")[:-1], 1):
    if i % 30 == 4:
        out.append(l.replace(b'"payload":"', b'"payload":"one\rtwo', 1)); bad.append(len(out))
    elif i % 30 == 11:
        out.append(l.replace(b',"', b',\r\t"'))
    else:
        out.append(l)
    if i % 60 == 20:
        out.append(b"not json\rat all"); bad.append(len(out))
    if i % 60 == 50:
        out.append(bytes([0x1f, 0x8b, 0x08, 0x0d, 0xff, 0x0d, 0x80, 0x41])); bad.append(len(out))
open(f"{d}/ev.ndjson", "wb").write(b"\n".join(out) + b"\n")
open(f"{d}/bad", "w").write("\n".join(map(str, bad)) + "\n")
PY
mock_start 1
mock topic events 2
mock produce events "$tmp/ev.ndjson"
cat > "$tmp/a.conf" <<CONF
$(server_section a)
$(table_section shop.events)
$(source_section ev events lb shop.events commit_interval=500ms kafka.session.timeout.ms=6000)
CONF
nmsg=$(wc -l <"$tmp/ev.ndjson")
node_start a "$tmp/a.conf"
for _ in $(seq 300); do
  m=$(curl -sf "http://127.0.0.1:$(cat "$tmp/port-a")/metrics") || fail "metrics"
  c=$(echo "$m" | sed -n 's/^floe_kafka_consumed_total{source="ev"} //p')
  [ "$c" = "$nmsg" ] && break
  sleep 0.2
done
[ "$c" = "$nmsg" ] || fail "consumed $c messages, expected $nmsg"
node_stop a
python3 "$KAFKA_DIR/verify.py" "$tmp/wh" shop.events "$FLOE" lb "$tmp/ev.ndjson" "$tmp/bad" ||
  fail "table or quarantine"
echo "kafka_line_breaks: ok"
