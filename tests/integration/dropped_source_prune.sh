#!/usr/bin/env bash
# dropped_source_prune.sh - a partition spec whose source column was dropped is bound to
# the older schema that has it, and that schema lives as long as the bound spec: scan
# planning (pruning by the manifests' partition summaries), `floe health` (partition
# labels) and a sort / z-order rewrite into that spec (-o output-spec-id) read it. Pruned
# scans give the rows of unpruned ones; under the sanitizers a spec pointing into a freed
# schema fails the run.
name=dropped_source_prune
oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"

cat > "$tmp/s.json" <<'J'
{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"k","required":true,"type":"long"},
 {"id":2,"name":"d","required":false,"type":"date"},
 {"id":3,"name":"b","required":false,"type":"string"}]}
J
python3 -c "
import json, datetime
for i in range(400):
    d = datetime.date(1965, 1, 1) + datetime.timedelta(days=37 * i)
    print(json.dumps({'k': i, 'd': d.isoformat(), 'b': 'b%d' % (i % 5)}))" > "$tmp/rows.ndjson"

# same_rows LABEL ARGS...: the scan with ARGS gives the rows of the same scan unpruned
same_rows() {
  local label=$1
  shift
  "$floe" scan t.p "$@" | sort > "$tmp/pruned" || { fail "$label: scan (rc $?)"; return; }
  "$floe" scan t.p "$@" --no-prune | sort > "$tmp/all" || { fail "$label: unpruned scan"; return; }
  cmp -s "$tmp/pruned" "$tmp/all" ||
    fail "$label: pruned $(wc -l < "$tmp/pruned") rows, unpruned $(wc -l < "$tmp/all")"
  [ -s "$tmp/all" ] || fail "$label: no rows"
}

"$floe" namespace create t > /dev/null || fail "namespace"
"$floe" table create t.p --schema "$tmp/s.json" --partition "year(d), b" > /dev/null ||
  fail "create"
"$floe" append t.p "$tmp/rows.ndjson" > /dev/null || fail "append"
"$floe" table partition t.p replace "k" > /dev/null || fail "partition replace"
"$floe" table schema t.p drop-column b > /dev/null || fail "drop-column b"
python3 -c "import json,sys; [print(json.dumps({k: v for k, v in json.loads(l).items() if k != 'b'})) for l in sys.stdin]" \
  < "$tmp/rows.ndjson" > "$tmp/rows2.ndjson"
"$floe" append t.p "$tmp/rows2.ndjson" > /dev/null || fail "append after the drop"
same_rows "d < 1970" --where "d < '1970-01-01'"
same_rows "d >= 2000" --where "d >= '2000-01-01'"
same_rows "k = 7" --where "k = 7"
"$floe" health t.p > "$tmp/health.txt" || fail "health (rc $?)"
"$floe" health t.p --json > /dev/null || fail "health --json (rc $?)"
"$floe" scan t.p | sort > "$tmp/before"
for order in "k" "zorder(k, d)"; do
  "$floe" rewrite t.p --strategy sort --sort-order "$order" -o rewrite-all=true \
    -o output-spec-id=0 > "$tmp/rw.out" 2>&1 ||
    { fail "rewrite --sort-order $order into spec 0 (rc $?): $(tail -3 "$tmp/rw.out")"; continue; }
  "$floe" scan t.p | sort > "$tmp/after"
  cmp -s "$tmp/before" "$tmp/after" || fail "rows changed by rewrite --sort-order $order"
  same_rows "after rewrite $order: d < 1970" --where "d < '1970-01-01'"
done
[ "$fails" = 0 ] || exit 1
echo "dropped_source_prune: ok"
