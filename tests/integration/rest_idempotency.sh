#!/usr/bin/env bash
# rest_idempotency.sh - `floe catalog serve` honours Idempotency-Key by claiming the key in
# the transaction that swaps the table pointer (adversary finding on issue 21): two
# servers on one catalog, on SQLite and (when its server binaries are installed) on
# PostgreSQL:
#  1. a keyed commit sent again (a retry after a lost answer), to the same server and to
#     the other: the first answer again (same metadata-location), nothing applied twice;
#  2. the same key with another body: 400, nothing applied;
#  3. a keyed multi-table transaction: 204 (the key is claimed once for the request, not
#     once per table), and its retry through the other server is 204 changing nothing;
#  4. the same keyed commit, and the same keyed transaction, sent to both servers at the
#     same instant, 10 rounds each: both answers equal, exactly one new metadata version
#     per table per round (before the fix the second swap recorded nothing and applied
#     the change a second time).
set -euo pipefail
name=rest_idempotency
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
command -v curl >/dev/null || { echo "$name: SKIP: curl missing"; exit 77; }
command -v python3 >/dev/null || { echo "$name: SKIP: python3 missing"; exit 77; }
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG PYICEBERG_HOME FLOE_TEST_REST_FAULT || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
fails=0
fail() { echo "$name: FAIL ($label): $*" >&2; fails=$((fails + 1)); }
"$floe" gen --schema-out "$tmp/schema.json" >/dev/null

cat > "$tmp/idem.py" <<'PY'
# idem.py A B MODE: the checks of one catalog (MODE: replay, race); prints failures
import http.client, json, sys, threading, uuid
A, B, mode = sys.argv[1], sys.argv[2], sys.argv[3]
H = {"Content-Type": "application/json"}
bad = []

def req(base, method, path, body=None, key=None):
    host, port = base.split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    h = dict(H)
    if key:
        h["Idempotency-Key"] = key
    c.request(method, path, body=None if body is None else json.dumps(body), headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, (json.loads(data) if data else None)

def table(t):
    s, d = req(A, "GET", "/v1/namespaces/idem/tables/" + t)
    assert s == 200, (s, d)
    m = d["metadata"]
    # the version: the sequence number heading the file name (00012-<uuid>.metadata.json);
    # the metadata-log is cut at write.metadata.previous-versions-max
    loc = d["metadata-location"]
    return loc, int(loc.rsplit("/", 1)[1].split("-", 1)[0]), m.get("properties", {})

def commit(t, props):
    return {"requirements": [], "updates": [{"action": "set-properties", "updates": props}]}

def tx(props):
    return {"table-changes": [
        dict(commit(t, props), identifier={"namespace": ["idem"], "name": t}) for t in ("t1", "t2")]}

if mode == "replay":
    key = str(uuid.uuid4())
    _, n0, _ = table("t1")
    s1, d1 = req(A, "POST", "/v1/namespaces/idem/tables/t1", commit("t1", {"r": "1"}), key)
    loc, n1, _ = table("t1")
    if s1 != 200 or d1["metadata-location"] != loc or n1 != n0 + 1:
        bad.append("keyed commit: %s %s" % (s1, d1))
    for base in (A, B):
        s, d = req(base, "POST", "/v1/namespaces/idem/tables/t1", commit("t1", {"r": "1"}), key)
        if s != 200 or d["metadata-location"] != loc:
            bad.append("replay through %s: %s %s (first answer %s)" % (base, s, d, loc))
    s, d = req(B, "POST", "/v1/namespaces/idem/tables/t1", commit("t1", {"r": "2"}), key)
    if s != 400 or d["error"]["type"] != "BadRequestException":
        bad.append("same key, another body: %s %s" % (s, d))
    loc2, n2, props = table("t1")
    if loc2 != loc or n2 != n1 or props.get("r") != "1":
        bad.append("the replays applied something: %s %d %s" % (loc2, n2, props))
    # a keyed multi-table transaction, and its retry through the other server
    key = str(uuid.uuid4())
    before = [table(t) for t in ("t1", "t2")]
    s, d = req(A, "POST", "/v1/transactions/commit", tx({"tx": "1"}), key)
    after = [table(t) for t in ("t1", "t2")]
    if s != 204:
        bad.append("keyed transaction: %s %s" % (s, d))
    elif [a[1] for a in after] != [b[1] + 1 for b in before] or any(a[2].get("tx") != "1" for a in after):
        bad.append("keyed transaction applied %s" % after)
    s, d = req(B, "POST", "/v1/transactions/commit", tx({"tx": "1"}), key)
    if s != 204 or [table(t) for t in ("t1", "t2")] != after:
        bad.append("transaction retried through the other server: %s %s" % (s, d))
else:
    def race(path, body, tables):
        key = str(uuid.uuid4())
        before = [table(t)[1] for t in tables]
        out = [None, None]
        gate = threading.Barrier(2)
        def go(i, base):
            gate.wait()
            out[i] = req(base, "POST", path, body, key)
        th = [threading.Thread(target=go, args=(i, b)) for i, b in enumerate((A, B))]
        [t.start() for t in th]
        [t.join() for t in th]
        after = [table(t)[1] for t in tables]
        return out, [a - b for a, b in zip(after, before)]
    twice = 0
    for i in range(10):
        (ra, rb), grew = race("/v1/namespaces/idem/tables/t1", commit("t1", {"race": str(i)}), ["t1"])
        if ra[0] != 200 or rb[0] != 200 or ra[1]["metadata-location"] != rb[1]["metadata-location"]:
            bad.append("race %d: answers %s / %s" % (i, ra[0], rb[0]))
        if grew != [1]:
            twice += 1
    for i in range(10):
        (ra, rb), grew = race("/v1/transactions/commit", tx({"txrace": str(i)}), ["t1", "t2"])
        if ra[0] != 204 or rb[0] != 204:
            bad.append("transaction race %d: answers %s %s / %s %s" % (i, ra[0], ra[1], rb[0], rb[1]))
        if grew != [1, 1]:
            twice += 1
    if twice:
        bad.append("%d of 20 keyed requests sent to both servers at once were applied %s"
                   % (twice, "twice (or not at all)"))
for b in bad:
    print(b)
PY

# run_catalog LABEL URI: two servers on catalog URI, the checks above
run_catalog() {
  label=$1
  export FLOE_CATALOG_URI=$2 FLOE_WAREHOUSE=$tmp/wh-$1
  "$floe" namespace create idem >/dev/null
  for t in t1 t2; do "$floe" table create "idem.$t" --schema "$tmp/schema.json" >/dev/null; done
  local ports=()
  for s in a b; do
    rm -f "$tmp/port_$s"
    "$floe" catalog serve --listen 127.0.0.1:0 --port-file "$tmp/port_$s" 2>"$tmp/server_$1_$s.log" &
    pids+=($!)
    for _ in $(seq 300); do [ -s "$tmp/port_$s" ] && break; sleep 0.1; done
    [ -s "$tmp/port_$s" ] || { fail "server $s did not start: $(cat "$tmp/server_$1_$s.log")"; return; }
    ports+=("127.0.0.1:$(cat "$tmp/port_$s")")
  done
  for mode in replay race; do
    python3 "$tmp/idem.py" "${ports[0]}" "${ports[1]}" $mode > "$tmp/out" 2>&1 ||
      echo "python: exit $?" >> "$tmp/out"
    while read -r line; do fail "$mode: $line"; done < "$tmp/out"
  done
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || fail "a server died: $(tail -5 "$tmp"/server_"$1"_*.log)"
    kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true
  done
  pids=()
  echo "$name: $label done"
}

run_catalog sqlite "$tmp/catalog.db"
if [ -n "$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null)" ]; then
  source "$src/tests/lib/pg.sh"
  pg_start || { echo "$name: FAIL: PostgreSQL did not start" >&2; exit 1; }
  run_catalog postgresql "$FLOE_PG_URI"
else
  echo "$name: PostgreSQL's server binaries are not installed: its part is not run"
fi
[ "$fails" = 0 ] || exit 1
echo "$name: ok"
