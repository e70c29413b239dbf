#!/usr/bin/env bash
# rest_commit_values.sh - values a commit to `floe catalog serve` must refuse (adversary
# adv21c finding 7 on issue 21):
#  - set-snapshot-ref with a retention setting (min-snapshots-to-keep, max-snapshot-age-ms,
#    max-ref-age-ms) that is not a positive integer: 400, the ref unchanged (negative ones
#    were taken with 200 and silently dropped; 0 was already a 400); positive ones kept;
#  - add-snapshot naming a schema-id the table does not have: 400 (was 200: the current
#    snapshot named schema 99).
name=rest_commit_values
source "$(dirname "$0")/lib/rest_serve_common.sh"
echo '{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}' > "$tmp/s.json"
seq 1 20 | sed 's/.*/{"id":&}/' > "$tmp/in.ndjson"
"$floe" namespace create shop >/dev/null
"$floe" table create shop.r --schema "$tmp/s.json" >/dev/null
"$floe" append shop.r "$tmp/in.ndjson" >/dev/null
"$floe" append shop.r "$tmp/in.ndjson" >/dev/null
serve_checked ""

python3 - "$base" "$(dirname "$0")/lib" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
from rest_table_calls import TableCalls
T = TableCalls("rest_commit_values", sys.argv[1] + "/v1/namespaces/shop/tables/r")
fail, call = T.fail, T.call

st, t = call()
m = t["metadata"]
cur = m["current-snapshot-id"]
def ref(**retention):
    return {"requirements": [], "updates": [dict({"action": "set-snapshot-ref", "ref-name": "main",
                                                  "type": "branch", "snapshot-id": cur}, **retention)]}
for key in ("min-snapshots-to-keep", "max-snapshot-age-ms"):
    for v in (-1, 0, "5", 1.5):
        st, body = call(ref(**{key: v}))
        print("set-snapshot-ref %s=%r: %d" % (key, v, st))
        if st != 400:
            fail("set-snapshot-ref %s=%r: %d, not 400: %s" % (key, v, st, body))
st, body = call({"requirements": [], "updates": [{"action": "set-snapshot-ref", "ref-name": "b1",
                 "type": "branch", "snapshot-id": cur, "max-ref-age-ms": -5}]})
print("set-snapshot-ref b1 max-ref-age-ms=-5: %d" % st)
if st != 400:
    fail("set-snapshot-ref max-ref-age-ms=-5: %d, not 400" % st)
st, body = call(ref(**{"min-snapshots-to-keep": 3, "max-snapshot-age-ms": 86400000}))
main = body.get("metadata", {}).get("refs", {}).get("main", {}) if st == 200 else {}
print("set-snapshot-ref with positive retention: %d %s" % (st, main))
if st != 200 or main.get("min-snapshots-to-keep") != 3 or main.get("max-snapshot-age-ms") != 86400000:
    fail("set-snapshot-ref with positive retention: %d %s" % (st, main))

# the new snapshot's manifest list: a copy of the current one (a list is a snapshot's own)
import shutil
cur_list = [s for s in m["snapshots"] if s["snapshot-id"] == cur][0]["manifest-list"]
own_list = cur_list[:-len(".avro")] + "-copy5001.avro"
shutil.copyfile(cur_list[len("file://"):], own_list[len("file://"):])
snap = {"snapshot-id": 5001, "parent-snapshot-id": cur, "sequence-number": m["last-sequence-number"] + 1,
        "timestamp-ms": m["last-updated-ms"] + 1,
        "manifest-list": own_list,
        "summary": {"operation": "append"}, "schema-id": 99}
st, body = call({"requirements": [], "updates": [{"action": "add-snapshot", "snapshot": snap},
                 {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 5001}]})
print("add-snapshot with schema-id 99: %d" % st)
if st != 400:
    fail("add-snapshot with a schema-id the table does not have: %d, not 400" % st)
snap["schema-id"] = m["current-schema-id"]
st, body = call({"requirements": [], "updates": [{"action": "add-snapshot", "snapshot": snap},
                 {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 5001}]})
print("add-snapshot with the current schema-id: %d" % st)
if st != 200:
    fail("add-snapshot with the table's schema-id: %d %s" % (st, body))
sys.exit(T.exit_code())
PY
server_alive
openapi_check
echo "rest_commit_values: ok"
