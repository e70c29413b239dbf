#!/usr/bin/env bash
# rest_commit_validate.sh - metadata a commit to `floe catalog serve` must refuse as floe's
# own CLI does (adversary adv21g findings G2, G3, G4 on issue 21); each was a 200:
#  - add-schema whose identifier-field-ids name an optional field, a double, or a field
#    inside a list (set-identifier-fields' rule): 400 naming the field;
#  - add-spec with a partition field named after another schema column (k = bucket[4](id),
#    id = truncate[2](k)) (partition add-field's rule): 400 naming the partition field;
#  - set-statistics / set-partition-statistics with a negative size, a footer larger than
#    the file or negative, an update snapshot-id other than the statistics': 400 naming it.
# Valid forms of each stay accepted (a required long identifier, an identity named after
# its own column, a bucket named id_bucket, consistent statistics).
name=rest_commit_validate
source "$(dirname "$0")/lib/rest_serve_common.sh"
cat > "$tmp/s.json" <<'J'
{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"k","type":"string","required":false},
 {"id":3,"name":"o","type":"long","required":false},
 {"id":4,"name":"f","type":"double","required":true},
 {"id":5,"name":"l","type":{"type":"list","element-id":6,"element":{"type":"struct",
   "fields":[{"id":7,"name":"y","type":"int","required":true}]},"element-required":true},
   "required":true}]}
J
"$floe" namespace create s >/dev/null
"$floe" table create s.t --schema "$tmp/s.json" >/dev/null
for i in 1 2; do
    echo "{\"id\":$i,\"k\":\"v$i\",\"f\":1.5,\"l\":[]}" > "$tmp/a.ndjson"
    "$floe" append s.t "$tmp/a.ndjson" >/dev/null
done
serve_checked ""

python3 - "$base" "$(dirname "$0")/lib" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
from rest_table_calls import TableCalls
T = TableCalls("rest_commit_validate", sys.argv[1] + "/v1/namespaces/s/tables/t")
fail, call = T.fail, T.call

def expect(what, updates, status, needle=None):
    st, body = call({"requirements": [], "updates": updates})
    msg = body.get("error", {}).get("message", "") if st != 200 else ""
    print("%s: %d %s" % (what, st, msg))
    if st != status:
        fail("%s: %d, not %d: %.200s" % (what, st, status, msg or body))
    elif needle and needle not in msg:
        fail("%s: the message does not name %r: %s" % (what, needle, msg))

st, t = call()
m = t["metadata"]
schema = [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]

# G2
for why, ids, needle in [("optional long", [3], "(o)"), ("required double", [4], "(f)"),
                         ("int nested in a list", [7], "(l.element.y)")]:
    sc = dict(schema, **{"identifier-field-ids": ids}); sc.pop("schema-id", None)
    expect("add-schema identifier %s" % why, [{"action": "add-schema", "schema": sc},
           {"action": "set-current-schema", "schema-id": -1}], 400, needle)
sc = dict(schema, **{"identifier-field-ids": [1]}); sc.pop("schema-id", None)
expect("add-schema identifier required long", [{"action": "add-schema", "schema": sc},
       {"action": "set-current-schema", "schema-id": -1}], 200)

# G3
for why, f in [("bucket(id) named k", {"source-id": 1, "name": "k", "transform": "bucket[4]"}),
               ("truncate(k) named id", {"source-id": 2, "name": "id", "transform": "truncate[2]"})]:
    expect("add-spec %s" % why, [{"action": "add-spec", "spec": {"fields": [f]}},
           {"action": "set-default-spec", "spec-id": -1}], 400, '"%s"' % f["name"])
expect("add-spec identity(k) named k, bucket(id) named id_bucket",
       [{"action": "add-spec", "spec": {"fields": [
           {"source-id": 2, "name": "k", "transform": "identity"},
           {"source-id": 1, "name": "id_bucket", "transform": "bucket[4]"}]}},
        {"action": "set-default-spec", "spec-id": -1}], 200)

# G4
st, t = call()
m = t["metadata"]
ss = sorted(m["snapshots"], key=lambda s: s["sequence-number"])
a, c = [s["snapshot-id"] for s in ss][-2:]
loc = m["location"]
def stat(sid, p, sz=10, ft=5):
    return {"snapshot-id": sid, "statistics-path": loc + "/metadata/" + p,
            "file-size-in-bytes": sz, "file-footer-size-in-bytes": ft, "blob-metadata": []}
def pstat(sid, sz):
    return {"snapshot-id": sid, "statistics-path": loc + "/metadata/p.parquet",
            "file-size-in-bytes": sz}
for why, u, needle in [
        ("negative file-size-in-bytes", {"action": "set-statistics", "snapshot-id": c,
                                         "statistics": stat(c, "n.stats", -10)}, "file-size-in-bytes"),
        ("footer larger than the file", {"action": "set-statistics", "snapshot-id": c,
                                         "statistics": stat(c, "f.stats", 10, 50)},
         "file-footer-size-in-bytes"),
        ("negative footer", {"action": "set-statistics", "snapshot-id": c,
                             "statistics": stat(c, "g.stats", 10, -1)}, "file-footer-size-in-bytes"),
        ("update snapshot-id differs from the statistics'",
         {"action": "set-statistics", "snapshot-id": c, "statistics": stat(a, "m.stats")},
         "snapshot-id"),
        ("negative partition statistics size",
         {"action": "set-partition-statistics", "partition-statistics": pstat(a, -1)},
         "file-size-in-bytes")]:
    expect("set-statistics %s" % why, [u], 400, needle)
expect("set-statistics consistent", [{"action": "set-statistics", "snapshot-id": c,
       "statistics": stat(c, "ok.stats", 10, 10)}], 200)
expect("set-statistics without the update's snapshot-id",
       [{"action": "set-statistics", "statistics": stat(a, "ok2.stats", 10, 0)}], 200)
expect("set-partition-statistics consistent",
       [{"action": "set-partition-statistics", "partition-statistics": pstat(a, 0)}], 200)
st, t = call()
got = sorted((s["snapshot-id"], s["statistics-path"].rsplit("/", 1)[1]) for s in t["metadata"].get("statistics", []))
if got != sorted([(c, "ok.stats"), (a, "ok2.stats")]):
    fail("statistics after the commits: %s" % got)
sys.exit(T.exit_code())
PY
server_alive
openapi_check
echo "rest_commit_validate: ok"
