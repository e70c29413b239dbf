#!/usr/bin/env bash
# floe serve limits and security: tokens and grants (401/403), unknown table (404), media
# types (415), body and decoded-size limits (413, gzip bomb), oversized record (rejected,
# the rest accepted), bad gzip / broken array / empty body (400), idempotent retries,
# path-escaping partition values, slow clients (header and body timeouts), backpressure
# (503 + Retry-After), admin grant, SIGHUP token reload. Nothing accepted is lost. A
# configuration file without auto_create creates no table on a post (and the log says so).
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

"$FLOE" gen --schema-out "$tmp/schema.json" >/dev/null
"$FLOE" gen --count 200 --seed 5 -o "$tmp/events.ndjson" >/dev/null
cat > "$tmp/paths.schema.json" <<'JSON'
{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"name","required":false,"type":"string"}]}
JSON
write_conf() {
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
max_body = 256KB
max_decoded = 1MB
max_record = 4KB
header_timeout = 2s
read_timeout = 2s
[table shop.events]
schema = $tmp/schema.json
partition = event_type
[table shop.paths]
schema = $tmp/paths.schema.json
partition = name
[token writer]
secret = $1
grants = shop.*
[token reader]
secret = reader-secret-22
grants = other.things
[token ops]
secret = ops-secret-333
grants = admin
CONF
}
write_conf writer-secret-1
start_server --config "$tmp/serve.conf"
url="http://127.0.0.1:$port"
W="Authorization: Bearer writer-secret-1"
ND="Content-Type: application/x-ndjson"
# post TABLE FILE [curl args...] -> prints the status code, body in $tmp/out
post() {
  local t=$1 f=$2; shift 2
  curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "$url/v1/tables/$t/events" --data-binary "@$f" "$@"
}
expect() { [ "$1" = "$2" ] || fail "$3: got HTTP $1, want $2 ($(head -c 300 "$tmp/out"))"; }

expect "$(post shop.events "$tmp/events.ndjson" -H "$ND")" 401 "no token"
grep -q '"status":401' "$tmp/out" || fail "401 body"
expect "$(post shop.events "$tmp/events.ndjson" -H "$ND" -H 'Authorization: Bearer nope-nope-nope')" 401 "wrong token"
expect "$(post shop.events "$tmp/events.ndjson" -H "$ND" -H 'Authorization: Bearer reader-secret-22')" 403 "missing grant"
expect "$(post shop.nothere "$tmp/events.ndjson" -H "$ND" -H "$W")" 404 "unknown table"
grep -q 'only the configured tables and those already in the catalog take posts (auto_create = false)' \
  "$tmp/server.log" || fail "the startup log does not say that tables are not auto-created"
! grep -q 'created on their first post' "$tmp/server.log" || fail "auto-creation announced"
expect "$(post 'shop.a%2F..' "$tmp/events.ndjson" -H "$ND" -H "$W")" 404 "hostile table name"
expect "$(post shop.events "$tmp/events.ndjson" -H 'Content-Type: text/plain' -H "$W")" 415 "media type"
expect "$(post shop.events "$tmp/events.ndjson" -H "$ND" -H 'Content-Encoding: br' -H "$W")" 415 "encoding"
expect "$(post shop.events "$tmp/events.ndjson" -H "$ND" -H "$W")" 200 "good post"
grep -q '"accepted":200,"rejected":0' "$tmp/out" || fail "200 accepted: $(cat "$tmp/out")"

# body limits
head -c 300000 /dev/zero | tr '\0' ' ' > "$tmp/big"
expect "$(post shop.events "$tmp/big" -H "$ND" -H "$W")" 413 "body over max_body"
expect "$(post shop.events "$tmp/big" -H "$ND" -H "$W" -H 'Transfer-Encoding: chunked')" 413 "chunked body over max_body"
head -c 5000000 /dev/zero | tr '\0' ' ' | gzip -c > "$tmp/bomb.gz"
expect "$(post shop.events "$tmp/bomb.gz" -H "$ND" -H "$W" -H 'Content-Encoding: gzip')" 413 "gzip bomb"
head -c 5000000 /dev/zero | tr '\0' ' ' | zstd -q -c > "$tmp/bomb.zst"
expect "$(post shop.events "$tmp/bomb.zst" -H "$ND" -H "$W" -H 'Content-Encoding: zstd')" 413 "zstd bomb"
printf 'this is not gzip' > "$tmp/bad.gz"
expect "$(post shop.events "$tmp/bad.gz" -H "$ND" -H "$W" -H 'Content-Encoding: gzip')" 400 "bad gzip"
gzip -c "$tmp/events.ndjson" | head -c 2000 > "$tmp/trunc.gz"
expect "$(post shop.events "$tmp/trunc.gz" -H "$ND" -H "$W" -H 'Content-Encoding: gzip')" 400 "truncated gzip"
gzip -c "$tmp/events.ndjson" > "$tmp/ev.gz"
expect "$(post shop.events "$tmp/ev.gz" -H "$ND" -H "$W" -H 'Content-Encoding: gzip')" 200 "gzip"
zstd -q -c "$tmp/events.ndjson" > "$tmp/ev.zst"
expect "$(post shop.events "$tmp/ev.zst" -H "$ND" -H "$W" -H 'Content-Encoding: zstd')" 200 "zstd"
printf '[{"id":1},' > "$tmp/broken.json"
expect "$(post shop.paths "$tmp/broken.json" -H 'Content-Type: application/json' -H "$W")" 400 "broken array"
: > "$tmp/empty"
expect "$(post shop.paths "$tmp/empty" -H "$ND" -H "$W")" 400 "empty body"

# an oversized record is rejected alone
python3 - "$tmp/rec.ndjson" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"id":1,"name":"ok-1"}\n{"id":2,"name":"' + "x" * 6000 + '"}\n{"id":3,"name":"ok-3"}\n')
PY
expect "$(post shop.paths "$tmp/rec.ndjson" -H "$ND" -H "$W")" 200 "oversized record"
grep -q '"accepted":2,"rejected":1,"errors":\[{"index":1,"reason":"too_large"' "$tmp/out" || fail "too_large: $(head -c 300 "$tmp/out")"

# idempotency: the same key twice -> the first answer, stored once
printf '{"id":10,"name":"idem"}\n{"id":11,"name":"idem"}\n' > "$tmp/idem.ndjson"
expect "$(post shop.paths "$tmp/idem.ndjson" -H "$ND" -H "$W" -H 'Idempotency-Key: k-1')" 200 "key first"
cp "$tmp/out" "$tmp/first"
expect "$(post shop.paths "$tmp/idem.ndjson" -H "$ND" -H "$W" -H 'Idempotency-Key: k-1')" 200 "key retry"
cmp -s "$tmp/first" "$tmp/out" || fail "retried key got another answer: $(cat "$tmp/first") vs $(cat "$tmp/out")"

# hostile partition values stay in their folders
printf '%s\n' '{"id":20,"name":"../x"}' '{"id":21,"name":"a/b"}' '{"id":22,"name":".."}' \
  '{"id":23,"name":"."}' '{"id":24,"name":"%2F"}' '{"id":25,"name":"/etc/passwd"}' > "$tmp/hostile.ndjson"
expect "$(post shop.paths "$tmp/hostile.ndjson" -H "$ND" -H "$W")" 200 "hostile values"

# slow clients: trickled headers and a trickled body are cut off; others are served
python3 - "$port" > "$tmp/slow.txt" <<'PY' &
import socket, sys, time
def trickle(data):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    t0 = time.time()
    try:
        for ch in data:
            s.send(bytes([ch]))
            time.sleep(0.3)
            if time.time() - t0 > 15:
                return "held"
        return "done"
    except OSError:
        return "closed after %.1fs" % (time.time() - t0)
print(trickle(b"POST /v1/tables/shop.paths/events HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 100))
PY
slow=$!
sleep 0.5
expect "$(post shop.paths "$tmp/idem.ndjson" -H "$ND" -H "$W")" 200 "request while a slow client waits"
wait $slow
grep -q '^closed after [2-5]\.' "$tmp/slow.txt" || fail "slow headers not cut off: $(cat "$tmp/slow.txt")"
python3 - "$port" > "$tmp/slowbody.txt" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /v1/tables/shop.paths/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer writer-secret-1\r\nContent-Type: application/x-ndjson\r\nContent-Length: 1000\r\n\r\n")
t0 = time.time()
try:
    while time.time() - t0 < 15:
        s.send(b" ")
        time.sleep(0.3)
    print("held")
except OSError:
    print("closed after %.1fs" % (time.time() - t0))
PY
grep -q '^closed after [2-5]\.' "$tmp/slowbody.txt" || fail "slow body not cut off: $(cat "$tmp/slowbody.txt")"

# admin needs its grant
code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "$url/v1/admin/flush" -H "$W")
expect "$code" 403 "flush with the writer token"
code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "$url/v1/admin/flush" -H 'Authorization: Bearer ops-secret-333')
expect "$code" 200 "flush with the ops token"

# SIGHUP: a new writer secret replaces the old one
write_conf writer-secret-new
kill -HUP "$pid"
sleep 0.5
expect "$(post shop.paths "$tmp/idem.ndjson" -H "$ND" -H "$W")" 401 "old token after reload"
expect "$(post shop.paths "$tmp/idem.ndjson" -H "$ND" -H 'Authorization: Bearer writer-secret-new')" 200 "new token after reload"
stop_server

# what landed: hostile values escaped inside the table folder, idempotent batch once
root="$tmp/wh/_landing/shop.paths"
for d in 'name=..%2Fx' 'name=a%2Fb' 'name=%2E%2E' 'name=%2E' 'name=%252F' 'name=%2Fetc%2Fpasswd'; do
  [ -d "$root/$d" ] || fail "missing escaped folder $d: $(ls "$root")"
done
# landing files in any codec (lz4 by default, zstd, plain)
landcat() { for f in "$@"; do case $f in *.zst) zstdcat "$f" ;; *.lz4) lz4cat "$f" ;; *) cat "$f" ;; esac; done; }
export -f landcat
outside=$(find "$tmp/wh" -name '*.ndjson.lz4' -o -name '*.ndjson.zst' | grep -v "^$tmp/wh/_landing/shop\.\(paths\|events\)/[^/]*/[^/]*$" || true)
[ -z "$outside" ] || fail "landing files outside their partition folders: $outside"
n=$(find "$root" -name '*.ndjson*' -exec bash -c 'landcat "$@"' _ {} + | grep -c '"name":"idem"')
[ "$n" = 6 ] || fail "idempotent batch stored $n/6 times (2 keyed + 2 slow-test + 2 after reload)"
n=$(find "$root" -name '*.ndjson*' -exec bash -c 'landcat "$@"' _ {} + | grep -c '"id":2[0-5],')
[ "$n" = 6 ] || fail "hostile records: $n of 6 landed"
n=$(find "$tmp/wh/_landing/shop.events" -name '*.ndjson*' -exec bash -c 'landcat "$@"' _ {} + | wc -l)
[ "$n" = 600 ] || fail "events landed: $n, want 600"
grep -q '"reason":"too_large"' "$tmp"/wh/_quarantine/shop.paths/*.ndjson || fail "too_large not quarantined"

# backpressure: a tiny buffer cap answers 503 with Retry-After instead of growing
cat > "$tmp/small.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh2
buffer_cap = 2KB
[table shop.events]
schema = $tmp/schema.json
CONF
start_server --config "$tmp/small.conf"
url="http://127.0.0.1:$port"
expect "$(post shop.events "$tmp/events.ndjson" -H "$ND")" 200 "first post under the cap"
code=$(curl -s -D "$tmp/hdr" -o "$tmp/out" -w '%{http_code}' -XPOST "$url/v1/tables/shop.events/events" --data-binary "@$tmp/events.ndjson" -H "$ND")
expect "$code" 503 "post over the buffer cap"
grep -qi '^Retry-After: [0-9]' "$tmp/hdr" || fail "no Retry-After"
stop_server
echo "serve_limits: ok"
