#!/usr/bin/env bash
# rest_remove_snapshots_ref.sh - a REST commit whose remove-snapshots names a snapshot a
# tag or branch points at is answered 409 CommitFailedException at once, naming the ref
# (adversary finding F9 on issue 21: the server retried it 5 times with back-off and
# answered "commit gave up after 5 attempts: other commits kept winning"):
#  - a tag made by an earlier commit, a tag made in the same commit, a branch, and the
#    same through POST /v1/transactions/commit: 409 naming the snapshot and the ref, no
#    word of attempts, nothing changed (the tag of the refused commit not made either);
#  - the server logs no commit retry for them; exchanges checked against the OpenAPI
#    document.
name=rest_remove_snapshots_ref
source "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

serve_checked ""
R=/v1/namespaces/shop
expect 200 x POST /v1/namespaces '{"namespace":["shop"]}'
expect 200 x POST $R/tables '{"name":"ev","schema":{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":true}]}}'
printf '{"id":1}\n' > "$tmp/e.ndjson"
for _ in 1 2 3; do
  FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db "$floe" append shop.ev "$tmp/e.ndjson" >/dev/null 2>"$tmp/err" ||
    fail "append: $(cat "$tmp/err")"
done
md() { curl -s "$base$R/tables/ev" | python3 -c "import json,sys; m=json.load(sys.stdin)['metadata']; print($1)"; }
s1=$(md "sorted(m['snapshots'], key=lambda s: s['sequence-number'])[0]['snapshot-id']")
s2=$(md "sorted(m['snapshots'], key=lambda s: s['sequence-number'])[1]['snapshot-id']")
state() { md "len(m['snapshots']), sorted(m['refs'])"; }
expect 200 x POST $R/tables/ev "{\"requirements\":[],\"updates\":[{\"action\":\"set-snapshot-ref\",\"ref-name\":\"t1\",\"type\":\"tag\",\"snapshot-id\":$s1}]}"
before=$(state)

# refused WHAT PATH BODY SNAPSHOT REF: 409 CommitFailedException naming both, no retries
refused() {
  local code
  code=$(req x POST "$2" "$3")
  [ "$code" = 409 ] || soft "$1: $code, want 409: $(head -c 300 "$tmp/body")"
  grep -q CommitFailedException "$tmp/body" || soft "$1: not a CommitFailedException: $(head -c 300 "$tmp/body")"
  grep -q "snapshot $4 " "$tmp/body" && grep -q "$5" "$tmp/body" ||
    soft "$1: the answer names not snapshot $4 and $5: $(head -c 300 "$tmp/body")"
  if grep -q 'attempts\|kept winning' "$tmp/body"; then soft "$1: the server retried: $(head -c 300 "$tmp/body")"; fi
  [ "$(state)" = "$before" ] || soft "$1: the table changed: $(state), was $before"
}
refused "tagged snapshot" $R/tables/ev \
  "{\"requirements\":[],\"updates\":[{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$s1]}]}" "$s1" "tag t1"
refused "tag made in the same commit" $R/tables/ev \
  "{\"requirements\":[],\"updates\":[{\"action\":\"set-snapshot-ref\",\"ref-name\":\"t2\",\"type\":\"tag\",\"snapshot-id\":$s2},{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$s2]}]}" "$s2" "tag t2"
refused "branch" $R/tables/ev \
  "{\"requirements\":[],\"updates\":[{\"action\":\"set-snapshot-ref\",\"ref-name\":\"b1\",\"type\":\"branch\",\"snapshot-id\":$s2},{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$s2]}]}" "$s2" "branch b1"
refused "transaction" /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"ev\"},\"requirements\":[],\"updates\":[{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$s1]}]}]}" "$s1" "tag t1"
# (the refusal is the ref's: without it the same removal goes through)
expect 200 x POST $R/tables/ev '{"requirements":[],"updates":[{"action":"remove-snapshot-ref","ref-name":"t1"}]}'
expect 200 x POST $R/tables/ev "{\"requirements\":[],\"updates\":[{\"action\":\"remove-snapshots\",\"snapshot-ids\":[$s1]}]}"
[ "$(md "len(m['snapshots'])")" = 2 ] || soft "the removal without the tag: $(state)"
server_alive
openapi_check
[ "$fails" = 0 ] || { echo "$name: $fails failure(s)" >&2; exit 1; }
echo "$name: ok"
