#!/usr/bin/env bash
# rest_prop_caps.sh - the property caps and the metadata-size cap (issue 21, adversary
# finding F3): four 15 MB set-properties through `floe catalog serve` grew a table's
# metadata to 60 MB, and 8 loads of it took 3.1 GB; namespace properties had no cap either.
# A change may leave at most 1,000 properties, 1 MiB of keys and values, 256 KiB a value
# (docs/DESIGN.md, "Property caps"); a commit through the server may write at most
# --max-metadata-bytes of metadata. Each at its edge: the limit taken, one more refused.
#  1. REST set-properties: a 256 KiB value taken, one byte more 400 naming the key, the
#     size and the cap; the 1,000th property taken, the 1,001st refused; keys and values
#     of exactly 1 MiB taken, one byte more refused; two set-properties of one commit
#     together past the count refused; also through transactions/commit; nothing written;
#  2. REST createTable: 1,000 properties taken, 1,001 and a 256 KiB + 1 value refused;
#  3. REST namespaces: create with 1,000 properties taken, 1,001 refused; update to exactly
#     1,000 and to exactly 1 MiB taken, one more (or a byte more) refused;
#  4. CLI: floe table create --property and floe table properties set, floe namespace
#     create and properties set at the same edges (exit code and message; a value of more
#     than 128 KiB cannot be passed on a command line at all: MAX_ARG_STRLEN);
#  5. a table another writer grew past the caps (1,500 properties) loads, takes a change
#     that does not grow it (a value replaced, a property removed; through REST and the
#     CLI), and refuses one that grows it;
#  6. --max-metadata-bytes: a commit that makes the metadata exactly the cap taken, one a
#     byte larger refused with 400 and no file written; a server with a smaller cap still
#     takes a commit that shrinks the table, refuses one that grows it.
set -euo pipefail
name=rest_prop_caps
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

# reqf TOKEN METHOD PATH FILE: req with the body in FILE (too large for an argument)
reqf() {
  curl -s -o "$tmp/body" -w '%{http_code}' -H "Authorization: Bearer $1" \
    -H 'Content-Type: application/json' -X "$2" "$base$3" --data-binary "@$4"
}
# expectf WHAT STATUS TEXT... METHOD PATH FILE: reqf, a soft failure unless the status is
# STATUS and the body holds each TEXT (the texts are the arguments before the last three)
expectf() {
  local what=$1 want=$2 got t
  shift 2
  local args=("$@") n=$#
  local m=${args[n - 3]} p=${args[n - 2]} f=${args[n - 1]}
  got=$(reqf "$T" "$m" "$p" "$f")
  if [ "$got" != "$want" ]; then
    soft "$what: $got (expected $want): $(head -c 300 "$tmp/body")"
    return
  fi
  for t in "${args[@]:0:n-3}"; do
    grep -qF -- "$t" "$tmp/body" || soft "$what: the answer lacks '$t': $(head -c 300 "$tmp/body")"
  done
}
# gen FILE PYTHON: FILE made by the python expression (json and the names below in scope)
gen() {
  python3 - "$1" "$2" <<'PY'
import json, sys
def props(d): return {"requirements": [], "updates": [{"action": "set-properties", "updates": d}]}
def fill(prefix, count, total):
    """count properties prefixNNNN of exactly total bytes of keys and values (a value at
    most 200,000 bytes)"""
    keys = ["%s%04d" % (prefix, i) for i in range(count)]
    left = total - sum(map(len, keys))
    d = {}
    for i, k in enumerate(keys):
        v = min(200000, left - (count - 1 - i))
        d[k] = "v" * v
        left -= v
    assert left == 0, left
    return d
out = eval(sys.argv[2])
with open(sys.argv[1], "w") as f:
    f.write(out if isinstance(out, str) else json.dumps(out))
PY
}
# tally FILE: "count bytes" of the properties of the LoadTableResult in FILE
tally() { loaded "$1" "'%d %d' % (len(m['properties']), sum(len(k) + len(v) for k, v in m['properties'].items()))"; }
load() { [ "$(req $T GET "/v1/namespaces/shop/tables/$1")" = 200 ] || fail "load $1: $(head -c 300 "$tmp/body")"; cp "$tmp/body" "$tmp/$1.json"; }
mdfiles() { find "$tmp/wh" -name '*.metadata.json*' | wc -l; }

open_shop
commit=/v1/namespaces/shop/tables
create_t() { # create_t NAME: an empty table through REST
  expect_soft "create $1" 200 metadata-location POST $commit "{\"name\":\"$1\",\"schema\":$id_schema}"
  load "$1"
}

# 1. set-properties
create_t c1
read -r n0 b0 <<<"$(tally "$tmp/c1.json")"
gen "$tmp/v_ok.json" 'props({"big": "x" * 262144})'
gen "$tmp/v_over.json" 'props({"big2": "x" * 262145})'
expectf "value of 256 KiB" 200 metadata-location POST $commit/c1 "$tmp/v_ok.json"
files=$(mdfiles)
expectf "value of 256 KiB + 1" 400 BadRequestException big2 262145 262144 POST $commit/c1 "$tmp/v_over.json"
[ "$(mdfiles)" = "$files" ] || soft "a refused set-properties wrote a metadata file"
create_t c2
read -r n0 b0 <<<"$(tally "$tmp/c2.json")"
gen "$tmp/n_ok.json" "props({'k%04d' % i: 'v' for i in range(1000 - $n0)})"
gen "$tmp/n_over.json" 'props({"one-more": "v"})'
expectf "the 1,000th property" 200 metadata-location POST $commit/c2 "$tmp/n_ok.json"
expectf "the 1,001st property" 400 BadRequestException one-more 1001 1000 POST $commit/c2 "$tmp/n_over.json"
gen "$tmp/n_same.json" 'props({"k0000": "w"})'
expectf "a value replaced at 1,000 properties" 200 metadata-location POST $commit/c2 "$tmp/n_same.json"
create_t c3
read -r n0 b0 <<<"$(tally "$tmp/c3.json")"
gen "$tmp/b_ok.json" "props(fill('b', 8, 1048576 - $b0))"
gen "$tmp/b_over.json" 'props({"b0000": "v" * (len(fill("b", 8, 1048576 - '"$b0"')["b0000"]) + 1)})'
expectf "1 MiB of keys and values" 200 metadata-location POST $commit/c3 "$tmp/b_ok.json"
expectf "1 MiB + 1 byte" 400 BadRequestException b0000 1048577 1048576 POST $commit/c3 "$tmp/b_over.json"
create_t c4
gen "$tmp/two.json" '{"requirements": [], "updates": [props({"a%04d" % i: "v" for i in range(600)})["updates"][0], props({"b%04d" % i: "v" for i in range(600)})["updates"][0]]}'
expectf "two set-properties of 600 each in one commit" 400 BadRequestException 1000 POST $commit/c4 "$tmp/two.json"
gen "$tmp/tx.json" '{"table-changes": [dict(identifier={"namespace": ["shop"], "name": "c4"}, **props({"t%04d" % i: "v" for i in range(1001)}))]}'
expectf "transactions/commit of 1,001 properties" 400 BadRequestException 1001 POST /v1/transactions/commit "$tmp/tx.json"
load c4
[ "$(loaded "$tmp/c4.json" "len(m['properties']) < 10")" = True ] || soft "a refused commit changed c4's properties"

# 2. createTable
gen "$tmp/create_ok.json" "{'name': 'm1', 'schema': json.loads('$id_schema'), 'properties': {'k%04d' % i: 'v' for i in range(1000)}}"
gen "$tmp/create_over.json" "{'name': 'm2', 'schema': json.loads('$id_schema'), 'properties': {'k%04d' % i: 'v' for i in range(1001)}}"
gen "$tmp/create_big.json" "{'name': 'm3', 'schema': json.loads('$id_schema'), 'properties': {'big': 'x' * 262145}}"
expectf "create with 1,000 properties" 200 metadata-location POST $commit "$tmp/create_ok.json"
expectf "create with 1,001 properties" 400 BadRequestException 1001 POST $commit "$tmp/create_over.json"
expectf "create with a value of 256 KiB + 1" 400 BadRequestException 262145 POST $commit "$tmp/create_big.json"
for t in m2 m3; do
  got=$(req $T GET $commit/$t)
  [ "$got" = 404 ] || soft "table $t: $got after a refused create, want 404"
done

# 3. namespaces (a value is at most 1,000 bytes, a key 255, as before)
gen "$tmp/ns_ok.json" "{'namespace': ['n1'], 'properties': {'k%04d' % i: 'v' for i in range(1000)}}"
gen "$tmp/ns_over.json" "{'namespace': ['n2'], 'properties': {'k%04d' % i: 'v' for i in range(1001)}}"
expectf "namespace create with 1,000 properties" 200 n1 POST /v1/namespaces "$tmp/ns_ok.json"
expectf "namespace create with 1,001 properties" 400 BadRequestException 1001 POST /v1/namespaces "$tmp/ns_over.json"
got=$(req $T GET /v1/namespaces/n2)
[ "$got" = 404 ] || soft "namespace n2: $got after a refused create, want 404"
expectf "namespace n1: one property more" 400 BadRequestException 1001 POST /v1/namespaces/n1/properties \
  <(echo '{"removals":[],"updates":{"one-more":"v"}}')
expect_soft "namespace n1: one removed, one added" 200 updated POST /v1/namespaces/n1/properties \
  '{"removals":["k0000"],"updates":{"one-more":"v"}}'
expect_soft "namespace n3" 200 n3 POST /v1/namespaces '{"namespace":["n3"]}'
# 835 keys of 255 bytes with values of 1,000 (1,047,925 bytes), and pad: 651 more
gen "$tmp/nsb_ok.json" "{'removals': [], 'updates': dict({('k%04d' % i) + 'x' * 250: 'v' * 1000 for i in range(835)}, pad='v' * 648)}"
expectf "namespace n3: exactly 1 MiB" 200 updated POST /v1/namespaces/n3/properties "$tmp/nsb_ok.json"
expectf "namespace n3: 1 MiB + 1 byte" 400 BadRequestException 1048577 POST /v1/namespaces/n3/properties \
  <(echo '{"removals":[],"updates":{"q":""}}')

# 4. the CLI
cli() { # cli WHAT WANT-EXIT TEXT CMD...: a soft failure unless floe exits WANT-EXIT (0 or
  # not 0) and, when refused, says TEXT
  local what=$1 want=$2 text=$3 rc=0
  shift 3
  "$floe" "$@" >"$tmp/cli.out" 2>"$tmp/cli.err" || rc=$?
  if [ "$want" = 0 ] && [ $rc != 0 ]; then soft "$what: exit $rc: $(head -c 300 "$tmp/cli.err")"; fi
  if [ "$want" != 0 ] && [ $rc = 0 ]; then soft "$what: taken, expected a refusal"; fi
  if [ "$want" != 0 ] && [ $rc != 0 ] && ! grep -qF -- "$text" "$tmp/cli.err"; then
    soft "$what: the message lacks '$text': $(head -c 300 "$tmp/cli.err")"
  fi
  if [ $rc -ge 98 ]; then soft "$what: exit $rc (sanitizer)"; fi
}
echo "$id_schema" > "$tmp/s.json"
mapfile -t k1000 < <(python3 -c 'for i in range(1000): print("k%04d=v" % i)')
# --property K=V: two arguments each
pa=(); for kv in "${k1000[@]}"; do pa+=(--property "$kv"); done
cli "table create with 1,001 properties (floe's defaults too)" 1 1001 table create shop.cli1 --schema "$tmp/s.json" "${pa[@]}" --property "one=v"
cli "table create shop.cli2" 0 - table create shop.cli2 --schema "$tmp/s.json"
"$floe" table describe shop.cli2 --json > "$tmp/cli2.json"
nd=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["properties"]))' "$tmp/cli2.json")
cli "table create with 1,000 properties with floe's defaults" 0 - table create shop.cli3 --schema "$tmp/s.json" "${pa[@]:0:$((2 * (1000 - nd)))}"
mapfile -t fill < <(python3 -c 'import sys
n = 1000 - int(sys.argv[1])
for i in range(n): print("p%04d=v" % i)' "$nd")
cli "table properties set to 1,000" 0 - table properties shop.cli2 set "${fill[@]}"
cli "table properties set: the 1,001st" 1 1001 table properties shop.cli2 set "one-more=v"
cli "table properties set: a value replaced at 1,000" 0 - table properties shop.cli2 set "p0000=w"
cli "table create shop.cli4" 0 - table create shop.cli4 --schema "$tmp/s.json"
"$floe" table describe shop.cli4 --json > "$tmp/cli4.json"
b4=$(python3 -c 'import json,sys; print(sum(len(k)+len(v) for k,v in json.load(open(sys.argv[1]))["properties"].items()))' "$tmp/cli4.json")
mapfile -t big < <(python3 -c 'import sys
left = 1048576 - int(sys.argv[1])
for i in range(9):
    k = "b%d" % i
    v = min(120000, left - len(k))
    left -= len(k) + v
    print(k + "=" + "v" * v)
assert left == 0, left' "$b4")
cli "table properties set to exactly 1 MiB" 0 - table properties shop.cli4 set "${big[@]}"
cli "table properties set: 1 MiB + 1 byte" 1 1048577 table properties shop.cli4 set "q="
cli "table properties set: a value 1 byte shorter" 0 - table properties shop.cli4 set "b0=${big[0]:4}"
cli "namespace create with 1,000 properties" 0 - namespace create cn1 "${k1000[@]}"
cli "namespace create with 1,001 properties" 1 1001 namespace create cn2 "${k1000[@]}" one=v
cli "namespace properties set: the 1,001st" 1 1001 namespace properties cn1 set one=v
cli "namespace properties set: one replaced at 1,000" 0 - namespace properties cn1 set k0001=w
cli "namespace create cn3" 0 - namespace create cn3
mapfile -t nsb < <(python3 -c '
d = {("k%04d" % i) + "x" * 250: "v" * 1000 for i in range(835)}
d["pad"] = "v" * 648
assert sum(len(k) + len(v) for k, v in d.items()) == 1048576
for k, v in d.items(): print(k + "=" + v)')
cli "namespace properties set to exactly 1 MiB" 0 - namespace properties cn3 set "${nsb[@]}"
cli "namespace properties set: 1 MiB + 1 byte" 1 1048577 namespace properties cn3 set "q="

# 5. a table another writer grew past the caps: its metadata file rewritten in place
create_t g1
ml=$(loaded "$tmp/g1.json" "d['metadata-location']")
python3 - "${ml#file://}" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m.setdefault("properties", {}).update({"g%04d" % i: "v" for i in range(1500)})
open(p, "w").write(json.dumps(m, separators=(",", ":")))
PY
load g1
[ "$(loaded "$tmp/g1.json" "len(m['properties']) >= 1500")" = True ] || soft "the grown table does not load its 1,500 properties"
expect_soft "past the caps: a value replaced" 200 metadata-location POST $commit/g1 \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"g0000":"w"}}]}'
expect_soft "past the caps: a property removed" 200 metadata-location POST $commit/g1 \
  '{"requirements":[],"updates":[{"action":"remove-properties","removals":["g0001"]}]}'
expect_soft "past the caps: a property added" 400 "g-new" POST $commit/g1 \
  '{"requirements":[],"updates":[{"action":"set-properties","updates":{"g-new":"v"}}]}'
cli "past the caps (CLI): a property removed" 0 - table properties shop.g1 unset g0002
cli "past the caps (CLI): a property added" 1 1499 table properties shop.g1 set g-new=v

# 6. the metadata cap: measured on this server, then edges on one started with the cap
create_t s1
msize() { load s1; local f; f=$(loaded "$tmp/s1.json" "d['metadata-location']"); stat -c %s "${f#file://}"; }
pad() { printf '{"requirements":[],"updates":[{"action":"set-properties","updates":{"pad":"%s"}}]}' "$(head -c "$1" /dev/zero | tr '\0' p)"; }
expect_soft "pad 100" 200 metadata-location POST $commit/s1 "$(pad 100)"
sa=$(msize)
expect_soft "pad 100 again" 200 metadata-location POST $commit/s1 "$(pad 100)"
sb=$(msize)
e=$((sb - sa)) # what one commit adds (its metadata-log entry)
cap=$((sb + e + 20000))
kill "$pid"; wait "$pid" 2>/dev/null || true; rm -f "$tmp/port"
start_server --max-metadata-bytes "$cap"
gen "$tmp/pad_ok.json" "props({'pad': 'p' * (100 + 20000)})"
expectf "metadata of exactly the cap ($cap bytes)" 200 metadata-location POST $commit/s1 "$tmp/pad_ok.json"
[ "$(msize)" = "$cap" ] || soft "metadata is $(msize) bytes, expected exactly the cap $cap (one commit adds $e)"
files=$(mdfiles)
gen "$tmp/pad_over.json" "props({'pad': 'p' * (100 + 20000 - $e + 1)})"
expectf "metadata of the cap + 1 byte" 400 BadRequestException "$((cap + 1))" "$cap" max-metadata-bytes POST $commit/s1 "$tmp/pad_over.json"
[ "$(mdfiles)" = "$files" ] || soft "a commit refused for the metadata cap wrote a file"
expectf "transactions/commit past the metadata cap" 400 BadRequestException max-metadata-bytes POST /v1/transactions/commit \
  <(python3 -c 'import json,sys; print(json.dumps({"table-changes":[dict(identifier={"namespace":["shop"],"name":"s1"}, **json.load(open(sys.argv[1])))]}))' "$tmp/pad_over.json")
kill "$pid"; wait "$pid" 2>/dev/null || true; rm -f "$tmp/port"
small=$((sb > 1024 ? sb : 1024)) # below the table's size now
start_server --max-metadata-bytes "$small"
expect_soft "past a smaller cap: a commit that shrinks" 200 metadata-location POST $commit/s1 "$(pad 9000)"
expect_soft "past a smaller cap: a commit that grows" 400 max-metadata-bytes POST $commit/s1 "$(pad 9100)"
expect_soft "past a smaller cap: the table loads" 200 metadata-location GET $commit/s1

server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
