#!/usr/bin/env bash
# rest_expire_refs.sh - an expiry never removes a snapshot a ref points at, even a ref
# made while the expiry was planning (adversary finding on issue 21: the server dropped a
# tag created meanwhile together with the snapshot it named, and the client then deleted
# that snapshot's files):
#  - `floe catalog serve` answers a remove-snapshots naming a tagged snapshot with 409
#    CommitFailedException and changes nothing;
#  - `floe expire` through REST, with a tag committed on a snapshot it planned to expire
#    between its plan and its commit (a proxy sends the tag first), retries on the new
#    metadata: the tag stays, its snapshot and every file it reaches too, and the tagged
#    rows still scan.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v curl >/dev/null || { echo "rest_expire_refs: SKIP: curl missing"; exit 77; }
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "rest_expire_refs: FAIL: $*" >&2; fails=$((fails + 1)); }
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_TEST_REST_FAULT || true
export FLOE_CATALOG_URI=$tmp/catalog.db FLOE_WAREHOUSE=$tmp/wh
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98

echo '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}' > "$tmp/s.json"
"$floe" namespace create shop >/dev/null
"$floe" table create shop.ev --schema "$tmp/s.json" >/dev/null
for k in 1 2 3 4; do
  seq $((k * 50 - 49)) $((k * 50)) | sed 's/.*/{"id":&}/' > "$tmp/in$k.ndjson"
  "$floe" append shop.ev "$tmp/in$k.ndjson" >/dev/null
done
"$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port" 2>"$tmp/server.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "rest_expire_refs: FAIL: the server did not start: $(cat "$tmp/server.log")"; exit 1; }
base=http://127.0.0.1:$(cat "$tmp/port")
table=$base/v1/namespaces/shop/tables/ev
md() { curl -s "$table" | python3 -c "import json,sys; m=json.load(sys.stdin)['metadata']; print($1)"; }
post() { curl -s -o "$tmp/answer" -w '%{http_code}' -H 'Content-Type: application/json' -X POST "$table" -d "$1"; }
s1=$(md "sorted(m['snapshots'], key=lambda s: s['sequence-number'])[0]['snapshot-id']")
s2=$(md "sorted(m['snapshots'], key=lambda s: s['sequence-number'])[1]['snapshot-id']")
ml1=$(md "[s['manifest-list'] for s in m['snapshots'] if s['snapshot-id'] == $s1][0]")

# 1. the server refuses to remove a tagged snapshot
code=$(post "{\"requirements\":[],\"updates\":[{\"action\":\"set-snapshot-ref\",\"ref-name\":\"t1\",\"type\":\"tag\",\"snapshot-id\":$s1}]}")
[ "$code" = 200 ] || fail "tag t1: $code $(head -c 300 "$tmp/answer")"
code=$(post "{\"requirements\":[],\"updates\":[{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$s1]}]}")
[ "$code" = 409 ] || fail "remove-snapshots of a tagged snapshot: $code (want 409) $(head -c 300 "$tmp/answer")"
grep -q CommitFailedException "$tmp/answer" || fail "not a CommitFailedException: $(head -c 300 "$tmp/answer")"
[ "$(md "len(m['snapshots'])")" = 4 ] || fail "a snapshot was removed by the refused commit"
[ "$(md "m['refs'].get('t1', {}).get('snapshot-id')")" = "$s1" ] || fail "tag t1 lost"

# 2. floe expire through a proxy that lets a tag on s2 land between its plan and its commit
cat > "$tmp/proxy.py" <<'PY'
import json, sys, urllib.request, urllib.error
sys.path.insert(0, sys.argv[1])
from json_http import JsonHandler, serve
up, tag_body = sys.argv[2], sys.argv[4]
state = {"tagged": False}
class H(JsonHandler):
    def relay(self, method):
        data = self.body() if method in ("POST", "PUT") else None
        if (method == "POST" and data and b"remove-snapshots" in data and not state["tagged"]):
            state["tagged"] = True
            req = urllib.request.Request(up + "/v1/namespaces/shop/tables/ev", data=tag_body.encode(),
                                         method="POST", headers={"Content-Type": "application/json"})
            urllib.request.urlopen(req).read()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        req = urllib.request.Request(up + self.path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req) as r:
                code, body, ctype = r.status, r.read(), r.headers.get("Content-Type")
        except urllib.error.HTTPError as e:
            code, body, ctype = e.code, e.read(), e.headers.get("Content-Type")
        self.send_response(code)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self): self.relay("GET")
    def do_HEAD(self): self.relay("HEAD")
    def do_POST(self): self.relay("POST")
    def do_DELETE(self): self.relay("DELETE")
serve(H, sys.argv[3])
PY
tag2="{\"requirements\":[],\"updates\":[{\"action\":\"set-snapshot-ref\",\"ref-name\":\"t2\",\"type\":\"tag\",\"snapshot-id\":$s2}]}"
python3 "$tmp/proxy.py" "$src/tests/integration/lib" "$base" "$tmp/pport" "$tag2" 2>"$tmp/proxy.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/pport" ] && break; sleep 0.1; done
[ -s "$tmp/pport" ] || { echo "rest_expire_refs: FAIL: the proxy did not start: $(cat "$tmp/proxy.log")"; exit 1; }
FLOE_CATALOG_URI=http://127.0.0.1:$(cat "$tmp/pport") FLOE_STATE_DB=$tmp/state.db \
  "$floe" expire shop.ev --retain-last 1 --older-than 0s --list > "$tmp/expire.out" 2>&1 ||
  fail "expire (rc $?): $(tail -3 "$tmp/expire.out")"
[ "$(md "m['refs'].get('t2', {}).get('snapshot-id')")" = "$s2" ] || fail "tag t2, made during the expiry, is gone"
[ "$(md "m['refs'].get('t1', {}).get('snapshot-id')")" = "$s1" ] || fail "tag t1 is gone"
[ "$(md "len(m['snapshots'])")" = 3 ] || fail "want s1, s2 and the current snapshot left: $(md "[s['snapshot-id'] for s in m['snapshots']]")"
[ -f "${ml1#file://}" ] || fail "the manifest list of tagged snapshot $s1 was deleted"
export FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db
n1=$("$floe" scan shop.ev --ref t1 2>"$tmp/scan.err" | wc -l) || fail "scan t1: $(cat "$tmp/scan.err")"
n2=$("$floe" scan shop.ev --ref t2 2>"$tmp/scan.err" | wc -l) || fail "scan t2: $(cat "$tmp/scan.err")"
[ "$n1" = 50 ] || fail "tag t1 scans $n1 rows, want 50"
[ "$n2" = 100 ] || fail "tag t2 scans $n2 rows, want 100"
[ "$fails" = 0 ] || exit 1
echo "rest_expire_refs: ok"
