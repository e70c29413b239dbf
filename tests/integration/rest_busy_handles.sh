#!/usr/bin/env bash
# rest_busy_handles.sh - `floe catalog serve` stays available while its catalog handles
# are busy and while slow clients hold large answers (adversary finding F3 on issue 21:
# with 8 heavy loads of a big table running, every request - GET /v1/config too - waited,
# 115 s; and each slow reader kept its whole answer in the server's memory):
#  1. all 8 handles held (FLOE_TEST_REST_FAULT=hold:8: each of the first 8 requests keeps
#     its handle 10 s, as a slow load would) and --max-wait 1s:
#     - GET /v1/config answers at once (it needs no handle);
#     - a table load and a commit get 503 ServiceUnavailableException with Retry-After
#       after about 1 s, not after the 10 s the holders take; the commit changed nothing;
#     - the held requests answer 200, and the table loads again afterwards;
#  2. --max-answer-bytes 12MiB and a table whose load answer is about 8 MB:
#     - a client that reads its load answer slowly holds 8 MB of the budget: a second
#       load gets 503 + Retry-After; /v1/config (a small answer) is 200; a commit is
#       200 (the answer to a change that ran is sent whatever the budget: a 503 would
#       invite a retry of a change already made);
#     - once the slow client goes, the load is 200 again.
name=rest_busy_handles
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

# timed METHOD PATH [BODY]: "STATUS SECONDS" of a request to the server; the answer's
# body in $tmp/body, its headers in $tmp/head
timed() {
  local m=$1 p=$2
  shift 2
  curl -s -o "$tmp/body" -D "$tmp/head" -w '%{http_code} %{time_total}\n' \
    -H 'Content-Type: application/json' -X "$m" "$base$p" ${1+-d "$1"}
}
retry_after() { grep -qi '^Retry-After: [0-9]' "$tmp/head"; }
# within SECONDS LOW HIGH: LOW <= SECONDS <= HIGH
within() { python3 -c 'import sys; a,l,h=map(float,sys.argv[1:]); sys.exit(0 if l<=a<=h else 1)' "$@"; }

"$floe" namespace create shop >/dev/null
printf '%s\n' "$id_schema" > "$tmp/s.json"
"$floe" table create shop.t --schema "$tmp/s.json" >/dev/null
T=/v1/namespaces/shop/tables/t
commit='{"requirements":[],"updates":[{"action":"set-properties","updates":{"x":"1"}}]}'

# 1. every handle busy
FLOE_TEST_REST_FAULT=hold:8 start_server --max-wait 1s
held=()
for i in $(seq 8); do
  curl -s -o "$tmp/held$i" -w '%{http_code}' "$base$T" > "$tmp/held$i.status" &
  held+=($!)
done
for _ in $(seq 100); do
  [ "$(grep -c 'holds catalog handle' "$tmp/server.log")" -ge 8 ] && break
  sleep 0.1
done
[ "$(grep -c 'holds catalog handle' "$tmp/server.log")" -ge 8 ] || fail "the 8 held requests did not start"
# the three at once, in one process (a shell between them can take seconds on a busy
# machine): each "STATUS SECONDS RETRY-AFTER TYPE"
python3 - "$port" "$T" "$commit" > "$tmp/busy.out" <<'PY'
import http.client, json, sys, threading, time
port, path, commit = int(sys.argv[1]), sys.argv[2], sys.argv[3]
out = {}
def ask(name, method, p, body=None):
    t = time.time()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, p, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    took = time.time() - t
    try:
        kind = json.loads(data)["error"]["type"]
    except Exception:
        kind = "-"
    out[name] = "%d %.3f %s %s" % (r.status, took, r.getheader("Retry-After") or "-", kind)
ts = [threading.Thread(target=ask, args=a) for a in
      (("config", "GET", "/v1/config"), ("load", "GET", path), ("commit", "POST", path, commit))]
for t in ts: t.start()
for t in ts: t.join()
for k in ("config", "load", "commit"):
    print(k, out[k])
PY
cat "$tmp/busy.out"
read -r _ code secs _ _ < <(grep '^config ' "$tmp/busy.out")
[ "$code" = 200 ] && within "$secs" 0 2 ||
  soft "GET /v1/config with every handle busy: $code after $secs s (expected 200 at once)"
for what in load commit; do
  read -r _ code secs ra kind < <(grep "^$what " "$tmp/busy.out")
  [ "$code" = 503 ] && [ "$ra" != - ] && [ "$kind" = ServiceUnavailableException ] ||
    soft "a $what with every handle busy: $code $kind, Retry-After $ra (expected 503 ServiceUnavailableException with Retry-After)"
  within "$secs" 0.9 5 ||
    soft "a $what with every handle busy was answered after $secs s (expected about 1 s, --max-wait, well before the holds end)"
done
wait "${held[@]}"
for i in $(seq 8); do
  [ "$(cat "$tmp/held$i.status")" = 200 ] || soft "held load $i: $(cat "$tmp/held$i.status")"
done
read -r code secs < <(timed GET "$T")
[ "$code" = 200 ] || soft "a load once the handles are free: $code"
python3 -c 'import json,sys; sys.exit("x" in json.load(open(sys.argv[1]))["metadata"].get("properties", {}))' "$tmp/body" ||
  soft "the commit answered 503 was applied"
server_alive
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
rm -f "$tmp/port"

# 2. answers held for slow readers: the 8 MB answer must not fit in the kernel's socket
# buffers (the server's send buffer grows to tcp_wmem's maximum, 4 MiB by default)
wmem=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_wmem 2>/dev/null || echo 4194304)
if [ "${wmem:-0}" -gt $((6 << 20)) ]; then
  echo "$name: tcp_wmem allows $wmem-byte send buffers: part 2 (slow readers) skipped"
  [ "$fails" = 0 ] || fail "$fails cases failed"
  echo "$name: ok"
  exit 0
fi
start_server --max-answer-bytes 12MiB
# 8 MB of properties, past the caps a change may reach (docs/DESIGN.md, "Property caps"):
# written by "another writer", the table's metadata file rewritten in place
read -r code secs < <(timed GET "$T")
[ "$code" = 200 ] || fail "loading shop.t: $code $(head -c 300 "$tmp/body")"
ml=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata-location"])' "$tmp/body")
python3 - "${ml#file://}" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m.setdefault("properties", {}).update({"big%d" % i: chr(97 + i) * (1 << 20) for i in range(8)})
open(p, "w").write(json.dumps(m, separators=(",", ":")))
PY
# a commit that does not grow a table past the caps
commit='{"requirements":[],"updates":[{"action":"remove-properties","removals":["big7"]}]}'
# the slow reader: a small receive window, the status line read, the rest left unread
python3 - "$port" "$T" "$tmp/slow.ready" "$tmp/slow.go" <<'PY' &
import os, socket, sys, time
port, path, ready, go = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
first = s.recv(64)
open(ready, "w").write(first.decode("latin-1").split("\r\n")[0])
for _ in range(300):
    if os.path.exists(go):
        break
    time.sleep(0.1)
s.close()
PY
slow=$!
for _ in $(seq 100); do [ -s "$tmp/slow.ready" ] && break; sleep 0.1; done
grep -q ' 200' "$tmp/slow.ready" 2>/dev/null || fail "the slow reader's load: $(cat "$tmp/slow.ready" 2>/dev/null)"
sleep 0.5
read -r code secs < <(timed GET "$T")
if [ "$code" != 503 ] || ! retry_after || ! grep -q 'max-answer-bytes' "$tmp/body"; then
  soft "a load while a slow reader holds 8 MB of the 12 MiB: $code (expected 503 with Retry-After naming --max-answer-bytes): $(head -c 200 "$tmp/body")"
fi
read -r code secs < <(timed GET /v1/config)
[ "$code" = 200 ] || soft "GET /v1/config while the answers budget is in use: $code"
read -r code secs < <(timed POST "$T" "$commit")
[ "$code" = 200 ] || soft "a commit while the answers budget is in use: $code (expected 200)"
touch "$tmp/slow.go"
wait "$slow"
code=
for _ in $(seq 50); do
  read -r code secs < <(timed GET "$T")
  [ "$code" = 200 ] && break
  sleep 0.1
done
[ "$code" = 200 ] || soft "a load once the slow reader is gone: $code"
server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
