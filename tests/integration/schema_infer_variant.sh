#!/usr/bin/env bash
# schema_infer_variant.sh - schema inference choosing variant (format v3 only; rule in
# include/floe/json.h, README "Format v3: variant for free-form JSON"):
#   - floe schema infer --format-version 3: a field whose kind varies between records (an
#     object in one, a string in another) is variant; an object whose fields' kinds vary
#     is variant as a whole, at any depth; a list whose elements vary is list<variant>; a
#     map-like object with values of varying kinds is variant; the record stays a struct,
#     stable fields keep their types (long + double -> double, timestamps, structs);
#   - without it (or --format-version 2) nothing is variant: the most frequent kind, with
#     the warning, as before;
#   - a v3 table created with the inferred schema takes every sampled record (none
#     rejected) and floe scan reads each back equal to its input line (JSON equality);
#     DuckDB reads the variant column to the same values;
#   - floe serve in evolve mode on a v3 table adds a new field whose kind varies as a
#     variant column and keeps every record; on a v2 table the same posts evolve the
#     field to the most frequent kind (the other record is quarantined), as before.
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"
js=$(cd "$(dirname "$0")/../js" && pwd)
fails=0
soft() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=default
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
mkdir -p "$tmp/wh"

python3 - "$tmp/s.ndjson" <<'PY'
import json, sys
recs = []
for i in range(12):
    r = {"id": i, "amount": i + 0.5 if i % 2 else i, "ts": "2026-12-0%dT10:00:00Z" % (1 + i % 9),
         "user": {"name": "u%d" % i, "age": 20 + i},
         # an object in some records, a string in others
         "payload": {"kind": "click", "x": i} if i % 3 else "plain text %d" % i,
         # an object whose field changes type: number, string, object
         "props": {"page": "/p%d" % i, "value": [i, "s%d" % i, {"deep": i}][i % 3]},
         # a list of strings and numbers
         "tags": ["t%d" % i, i],
         # deeper: meta.ctx is an object whose field 'v' varies; meta.src is stable
         "meta": {"src": "web", "ctx": {"v": True if i % 2 else "no"}},
         # many distinct keys (map-like), values of varying kinds
         "attrs": {"a%d_%d" % (i, j): (j if j % 2 else "v%d" % j) for j in range(8)},
         }
    if i == 5:
        r["payload"] = None
    recs.append(r)
with open(sys.argv[1], "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
PY
types() { # types SCHEMA.json: "name=type" for the interesting fields
    python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
def t(x):
    if isinstance(x, str): return x
    if x["type"] == "struct": return "struct<" + ",".join(f["name"] + ":" + t(f["type"]) for f in x["fields"]) + ">"
    if x["type"] == "list": return "list<" + t(x["element"]) + ">"
    if x["type"] == "map": return "map<" + t(x["key"]) + "," + t(x["value"]) + ">"
    return x["type"]
for f in s["fields"]: print(f["name"] + "=" + t(f["type"]))
PY
}

# ---- 1. floe schema infer --format-version 3 ------------------------------------------
"$FLOE" schema infer --format-version 3 "$tmp/s.ndjson" -o "$tmp/v3.json" 2> "$tmp/v3.err" ||
    fail "schema infer --format-version 3: $(cat "$tmp/v3.err")"
types "$tmp/v3.json" > "$tmp/v3.types"
cat > "$tmp/v3.want" <<'T'
id=long
amount=double
ts=timestamptz
user=struct<name:string,age:long>
payload=variant
props=variant
tags=list<variant>
meta=struct<src:string,ctx:variant>
attrs=variant
T
cmp -s "$tmp/v3.types" "$tmp/v3.want" ||
    soft "v3 inference: $(diff "$tmp/v3.want" "$tmp/v3.types" | tr '\n' ' ')"
grep -q 'mixed kinds' "$tmp/v3.err" && soft "v3 inference still warns: $(cat "$tmp/v3.err")"

# ---- 2. without it: as before (no variant, the most frequent kind, a warning) ----------
for args in "" "--format-version 2"; do
    # shellcheck disable=SC2086
    "$FLOE" schema infer $args "$tmp/s.ndjson" -o "$tmp/v2.json" 2> "$tmp/v2.err" ||
        fail "schema infer $args: $(cat "$tmp/v2.err")"
    types "$tmp/v2.json" > "$tmp/v2.types"
    grep -q variant "$tmp/v2.types" && soft "infer '$args' chose variant: $(cat "$tmp/v2.types")"
    grep -qx 'payload=struct<kind:string,x:long>' "$tmp/v2.types" ||
        soft "infer '$args': payload $(grep payload "$tmp/v2.types")"
    grep -q "field 'payload' has mixed kinds" "$tmp/v2.err" ||
        soft "infer '$args': no warning for payload: $(cat "$tmp/v2.err")"
done
rc=0; "$FLOE" schema infer --format-version 4 "$tmp/s.ndjson" > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || soft "--format-version 4: exit $rc, expected 2"

# ---- 3. a v3 table with the inferred schema takes every record -------------------------
"$FLOE" namespace create ns > /dev/null
"$FLOE" table create ns.ev --schema "$tmp/v3.json" --property format-version=3 > /dev/null ||
    fail "table create with the inferred schema"
out=$("$FLOE" append ns.ev "$tmp/s.ndjson" --json 2>&1) || fail "append: $out"
"$FLOE" scan ns.ev > "$tmp/rows.ndjson" || fail "scan"
python3 - "$tmp/s.ndjson" "$tmp/rows.ndjson" <<'PY' || soft "scanned rows differ from the input"
import json, sys
want = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
got = {r["id"]: r for r in map(json.loads, open(sys.argv[2]))}
assert sorted(got) == sorted(want), (sorted(got), sorted(want))
for k, w in want.items():
    g = dict(got[k])
    g["ts"] = w["ts"] if g["ts"].startswith(w["ts"][:19]) else g["ts"]
    g = {f: v for f, v in g.items() if v is not None}
    w = {f: v for f, v in w.items() if v is not None}
    assert g == w, (k, g, w)
PY
if command -v node > /dev/null && [ -d "$js/node_modules/@duckdb/node-api" ]; then
    "$FLOE" scan ns.ev --plan --json | python3 -c "
import json,sys; print('\\n'.join(f['local_path'] for f in json.load(sys.stdin)['files']))" > "$tmp/files"
    for c in payload props attrs; do
        python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); print(json.dumps({'id': r['id'], sys.argv[2]: r[sys.argv[2]]}))" "$tmp/s.ndjson" "$c" > "$tmp/want.$c"
        # shellcheck disable=SC2046
        node "$js/variant_json.mjs" --column "$c" "$tmp/want.$c" $(cat "$tmp/files") > "$tmp/duck.out" 2>&1 ||
            soft "DuckDB reads variant column $c differently: $(cat "$tmp/duck.out")"
    done
else
    echo "schema_infer_variant: tests/js not installed: DuckDB check skipped"
fi

# ---- 4. floe serve, evolve mode: variant for a new field on a v3 table only ------------
echo '{"type":"struct","fields":[{"id":1,"name":"id","required":false,"type":"long"}]}' > "$tmp/id.json"
"$FLOE" namespace create app > /dev/null
"$FLOE" table create app.v3 --schema "$tmp/id.json" --property format-version=3 > /dev/null
"$FLOE" table create app.v2 --schema "$tmp/id.json" > /dev/null
cat > "$tmp/b.ndjson" <<'J'
{"id":1,"extra":{"a":1,"b":[1,2]}}
{"id":2,"extra":"just a string"}
{"id":3,"extra":{"a":2}}
J
start_server --warehouse "$tmp/wh" --listen 127.0.0.1:0
for t in v3 v2; do
    code=$(curl -s -o "$tmp/answer.$t" -w '%{http_code}' -XPOST \
        "http://127.0.0.1:$port/v1/tables/app.$t/events" \
        -H 'Content-Type: application/x-ndjson' --data-binary @"$tmp/b.ndjson")
    [ "$code" = 200 ] || fail "POST app.$t: $code $(cat "$tmp/answer.$t")"
done
grep -q '"accepted":3' "$tmp/answer.v3" || soft "v3 post: $(cat "$tmp/answer.v3")"
grep -q '"accepted":2' "$tmp/answer.v2" && grep -q '"rejected":1' "$tmp/answer.v2" ||
    soft "v2 post (the most frequent kind, one record quarantined): $(cat "$tmp/answer.v2")"
flush_wait
stop_server
"$FLOE" schema show app.v3 > "$tmp/sv3.json" || fail "schema show app.v3"
types "$tmp/sv3.json" | grep -qx 'extra=variant' || soft "app.v3: $(types "$tmp/sv3.json" | tr '\n' ' ')"
"$FLOE" schema show app.v2 > "$tmp/sv2.json" || fail "schema show app.v2"
types "$tmp/sv2.json" | grep -qx 'extra=struct<a:long,b:list<long>>' ||
    soft "app.v2: $(types "$tmp/sv2.json" | tr '\n' ' ')"
"$FLOE" scan app.v3 > "$tmp/v3rows.ndjson" || fail "scan app.v3"
python3 - "$tmp/b.ndjson" "$tmp/v3rows.ndjson" <<'PY' || soft "app.v3 rows differ from the posts"
import json, sys
want = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["id"])
got = sorted((json.loads(l) for l in open(sys.argv[2])), key=lambda r: r["id"])
assert got == want, (got, want)
PY

if [ "$fails" -gt 0 ]; then
    echo "schema_infer_variant: $fails failure(s)"
    exit 1
fi
echo "schema_infer_variant: ok"
