#!/usr/bin/env bash
# rest_replace_main.sh - a REST commit may remove the main branch, as Iceberg Java's
# replace transaction (REPLACE TABLE, CREATE OR REPLACE TABLE ... AS SELECT) does
# (adversary finding F4 on issue 21: every such commit was a 400 "the main branch cannot
# be removed"):
#  1. the replace commit of the finding (assert-table-uuid, assert-ref-snapshot-id main;
#     remove-snapshot-ref main, add-schema, set-current-schema -1, set-properties): 200;
#     current-snapshot-id -1, no main ref, the snapshots and snapshot-log kept, the new
#     schema current; floe scans the table as empty, and a floe append then makes main
#     again (one row);
#  2. an RTAS-shaped commit (remove-snapshot-ref main, add-snapshot, set-snapshot-ref
#     main): 200; main and current-snapshot-id are the added snapshot, the snapshot-log
#     ends with it; floe scans its rows;
#  3. `floe ref drop TABLE main` is still refused (exit 1); exchanges checked against
#     the OpenAPI document.
name=rest_replace_main
source "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

serve_checked ""
R=/v1/namespaces/shop
expect 200 x POST /v1/namespaces '{"namespace":["shop"]}'
expect 200 x POST $R/tables '{"name":"ev","schema":{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"kind","type":"string","required":false}]}}'
printf '{"id":1,"kind":"a"}\n' > "$tmp/e.ndjson"
export FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db
for _ in 1 2; do
  "$floe" append shop.ev "$tmp/e.ndjson" >/dev/null 2>"$tmp/err" || fail "append: $(cat "$tmp/err")"
done
md() { curl -s "$base$R/tables/ev" | python3 -c "import json,sys; m=json.load(sys.stdin)['metadata']; print($1)"; }
uuid=$(md "m['table-uuid']")
cur=$(md "m['current-snapshot-id']")
log_before=$(md "m['snapshot-log']")
rows() { "$floe" scan shop.ev 2>"$tmp/scan.err" | wc -l; }

# 1. the replace commit of the finding
code=$(req x POST $R/tables/ev "{\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"$uuid\"},{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":$cur}],
  \"updates\":[{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"main\"},
  {\"action\":\"add-schema\",\"schema\":{\"type\":\"struct\",\"schema-id\":2,\"fields\":[{\"id\":3,\"name\":\"x\",\"type\":\"string\",\"required\":false}]},\"last-column-id\":3},
  {\"action\":\"set-current-schema\",\"schema-id\":-1},{\"action\":\"set-properties\",\"updates\":{\"replaced\":\"1\"}}]}")
[ "$code" = 200 ] || soft "replace commit: $code, want 200: $(head -c 300 "$tmp/body")"
[ "$(jget '["metadata"]["current-snapshot-id"]' < "$tmp/body")" = -1 ] || soft "answer: current-snapshot-id is not -1"
[ "$(md "m['current-snapshot-id'], 'main' in m.get('refs', {}), len(m['snapshots'])")" = "-1 False 2" ] ||
  soft "after the replace: $(md "m['current-snapshot-id'], m.get('refs'), len(m['snapshots'])")"
[ "$(md "m['snapshot-log']")" = "$log_before" ] || soft "snapshot-log changed: $(md "m['snapshot-log']")"
[ "$(md "[f['name'] for s in m['schemas'] if s['schema-id'] == m['current-schema-id'] for f in s['fields']]")" = "['x']" ] ||
  soft "the new schema is not current: $(md "m['current-schema-id']")"
n=$(rows) || soft "scan of the replaced table failed: $(cat "$tmp/scan.err")"
[ "$n" = 0 ] || soft "the replaced table scans $n rows, want 0"
printf '{"x":"new"}\n' > "$tmp/x.ndjson"
"$floe" append shop.ev "$tmp/x.ndjson" >/dev/null 2>"$tmp/err" || soft "append after the replace: $(cat "$tmp/err")"
[ "$(md "m['refs']['main']['snapshot-id'] == m['current-snapshot-id'] != -1")" = True ] || soft "the append made no main"
n=$(rows)
[ "$n" = 1 ] || soft "after the append: $n rows, want 1"

# 2. RTAS: remove main, add a snapshot (a copy of the first snapshot's manifest list), main on it
s1=$(md "sorted(m['snapshots'], key=lambda s: s['sequence-number'])[0]['snapshot-id']")
ml1=$(md "[s['manifest-list'] for s in m['snapshots'] if s['snapshot-id'] == $s1][0]")
ml_new=${ml1%/*}/snap-rtas-1.avro
cp "${ml1#file://}" "${ml_new#file://}"
seq=$(md "m['last-sequence-number'] + 1")
cur=$(md "m['current-snapshot-id']")
new=4242424242424242
code=$(req x POST $R/tables/ev "{\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"$uuid\"},{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":$cur}],
  \"updates\":[{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"main\"},
  {\"action\":\"add-schema\",\"schema\":{\"type\":\"struct\",\"schema-id\":3,\"fields\":[{\"id\":4,\"name\":\"id\",\"type\":\"long\",\"required\":true},{\"id\":5,\"name\":\"kind\",\"type\":\"string\",\"required\":false}]},\"last-column-id\":5},
  {\"action\":\"set-current-schema\",\"schema-id\":-1},
  {\"action\":\"add-snapshot\",\"snapshot\":{\"snapshot-id\":$new,\"sequence-number\":$seq,\"timestamp-ms\":$(date +%s)000,\"manifest-list\":\"$ml_new\",\"summary\":{\"operation\":\"append\"},\"schema-id\":0}},
  {\"action\":\"set-snapshot-ref\",\"ref-name\":\"main\",\"type\":\"branch\",\"snapshot-id\":$new}]}")
[ "$code" = 200 ] || soft "RTAS commit: $code, want 200: $(head -c 300 "$tmp/body")"
[ "$(md "m['current-snapshot-id'], m['refs']['main'], m['snapshot-log'][-1]['snapshot-id']")" = "$new {'snapshot-id': $new, 'type': 'branch'} $new" ] ||
  soft "after RTAS: $(md "m['current-snapshot-id'], m.get('refs'), m['snapshot-log'][-1:]")"
[ "$(md "len(m['snapshots'])")" = 4 ] || soft "RTAS: want 4 snapshots, have $(md "len(m['snapshots'])")"
n=$(rows) || soft "scan after RTAS failed: $(cat "$tmp/scan.err")"
[ "$n" = 1 ] || soft "after RTAS: $n rows, want 1 (the first append's): $(cat "$tmp/scan.err")"

# 3. the CLI does not drop main by hand
rc=0
"$floe" ref drop shop.ev main >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || soft "floe ref drop main: exit $rc, want 1: $(cat "$tmp/err")"
[ "$(md "m['current-snapshot-id']")" = "$new" ] || soft "floe ref drop main changed the table"
server_alive
openapi_check
[ "$fails" = 0 ] || { echo "$name: $fails failure(s)" >&2; exit 1; }
echo "$name: ok"
