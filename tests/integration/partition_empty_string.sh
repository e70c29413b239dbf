#!/usr/bin/env bash
# partition_empty_string.sh - an identity partition on a string column whose value is ''
# (not null): append writes a file whose column bounds are both empty (every row ''), and
# rewrite keeps each output file's partition value after the source file is closed (the
# value is copied by its length: an empty value's pointer may point anywhere). Rows,
# partition values and per-partition counts are checked after the appends and after a
# rewrite with each strategy; under the sanitizers any stray read or write fails the run.
name=partition_empty_string
oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"

cat > "$tmp/s.json" <<'J'
{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"k","required":true,"type":"long"},
 {"id":2,"name":"s","required":false,"type":"string"}]}
J
python3 -c "import json; [print(json.dumps({'k':i,'s':''})) for i in range(50)]" > "$tmp/empty.ndjson"
python3 -c "import json; [print(json.dumps({'k':1000+i,'s':['a','',None][i%3]})) for i in range(300)]" \
  > "$tmp/mixed.ndjson"

# check LABEL: the table holds exactly the rows of the two inputs (twice the mixed ones),
# and the data files are in the three partitions '', 'a' and null
check() {
  "$floe" scan t.p --format ndjson > "$tmp/rows.jsonl" || { fail "$1: scan"; return; }
  python3 - "$tmp/rows.jsonl" "$tmp/empty.ndjson" "$tmp/mixed.ndjson" <<'PY' || fail "$1: rows"
import collections, json, sys
got = collections.Counter(json.dumps(json.loads(l), sort_keys=True) for l in open(sys.argv[1]))
want = collections.Counter()
for path, times in ((sys.argv[2], 1), (sys.argv[3], 2)):
    for l in open(path):
        want[json.dumps(json.loads(l), sort_keys=True)] += times
if got != want:
    print("rows differ:", sum(got.values()), "vs", sum(want.values()), file=sys.stderr)
    sys.exit(1)
PY
  "$floe" files t.p --json > "$tmp/files.json" || { fail "$1: files"; return; }
  python3 - "$tmp/files.json" <<'PY' || fail "$1: partition values"
import json, sys
parts = {f["partition"] for f in json.load(open(sys.argv[1]))}
if parts != {"s=", "s=a", "s=null"}:
    print("partitions:", sorted(parts), file=sys.stderr)
    sys.exit(1)
PY
}

"$floe" namespace create t > /dev/null || fail "namespace"
"$floe" table create t.p --schema "$tmp/s.json" --partition s > /dev/null || fail "create"
"$floe" append t.p "$tmp/empty.ndjson" > /dev/null || fail "append of '' rows (rc $?)"
"$floe" append t.p "$tmp/mixed.ndjson" > /dev/null || fail "append of mixed rows"
"$floe" append t.p "$tmp/mixed.ndjson" > /dev/null || fail "second append of mixed rows"
check "after appends"
for strategy in binpack "sort --sort-order k"; do
  # shellcheck disable=SC2086
  "$floe" rewrite t.p --strategy $strategy -o rewrite-all=true > "$tmp/rw.out" 2>&1 ||
    { fail "rewrite --strategy $strategy (rc $?): $(tail -3 "$tmp/rw.out")"; continue; }
  check "after rewrite --strategy $strategy"
done
"$floe" rewrite t.p --strategy sort --sort-order "zorder(k, s)" -o rewrite-all=true > "$tmp/rw.out" 2>&1 ||
  fail "rewrite zorder (rc $?): $(tail -3 "$tmp/rw.out")"
check "after rewrite zorder"
[ "$fails" = 0 ] || exit 1
echo "partition_empty_string: ok"
