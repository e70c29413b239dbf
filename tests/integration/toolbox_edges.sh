#!/usr/bin/env bash
# toolbox_edges.sh - issue 24, adversary findings adv24b 5, 6, 16, 18, 19: table list of a
# missing namespace under --json prints the error document alone (it printed "[" first);
# floe health does not say "top 15 of 10" partitions; epoch milliseconds 0 and negative
# ones are times for expire --older-than and snapshots rollback --to, as the help says; a
# partition spec whose source column was dropped since is read without use-after-free
# (scan pruning, health, run under ASan by the test build) and a sort rewrite into it
# copies empty strings without a NULL memcpy (UBSan).
set -euo pipefail
name=toolbox_edges oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

# -- 5: --json stays one document --------------------------------------------------------
rc=0; "$floe" table list nope --json > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] || fail "table list nope: exit $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["error"]["code"] == "NOTFOUND", d' out.txt ||
  fail "table list nope --json: $(cat out.txt)"

# -- 6: a table with fewer partitions than the text shows ------------------------------
"$floe" table create ns.h --schema s.json --partition k >/dev/null
python3 -c '
import json
for i in range(40): print(json.dumps({"k": "p%d" % (i % 10), "v": i}))' > h.ndjson
"$floe" append ns.h h.ndjson >/dev/null
"$floe" append ns.h h.ndjson >/dev/null
"$floe" health ns.h --runs 0 --no-listing > out.txt
grep -qx 'partitions by data files (10)' out.txt || fail "health: $(grep 'partitions by' out.txt)"

# -- 16: epoch milliseconds 0 and below ----------------------------------------------------
rc=0; "$floe" expire ns.h --older-than 0 --dry-run > out.txt 2> err.txt || rc=$?
[ $rc = 0 ] || fail "expire --older-than 0: exit $rc, $(cat err.txt)"
for t in 0 -5; do
  rc=0; "$floe" snapshots rollback ns.h --to "$t" > out.txt 2> err.txt || rc=$?
  [ $rc = 1 ] && grep -q "1970\|1969" err.txt || fail "rollback --to $t: exit $rc, $(cat err.txt)"
done

# -- 18, 19: a spec whose source column was dropped since ---------------------------------
cat > d.json <<'EOF'
{"type":"struct","fields":[{"id":1,"name":"k","required":false,"type":"long"},
 {"id":2,"name":"b","required":false,"type":"int"},{"id":3,"name":"s","required":false,"type":"string"},
 {"id":4,"name":"d","required":false,"type":"date"}]}
EOF
python3 -c '
import json
for i in range(200):
    print(json.dumps({"k": i, "b": i % 3, "s": "", "d": "1969-12-%02d" % (1 + i % 28) if i % 2 else "2026-01-01"}))' > d.ndjson
"$floe" table create ns.u --schema d.json --partition "year(d), b" >/dev/null
"$floe" append ns.u d.ndjson >/dev/null
"$floe" table partition ns.u replace "k" >/dev/null
"$floe" table schema ns.u drop-column b >/dev/null
n=$("$floe" scan ns.u --where "d < '1970-01-01'" | wc -l) || fail "scan with pruning by the old spec"
[ "$n" = 100 ] || fail "scan with pruning by the old spec: $n rows, expected 100"
"$floe" health ns.u --runs 0 --no-listing > out.txt || fail "health with the old spec"
"$floe" rewrite ns.u --strategy sort --sort-order k -o rewrite-all=true -o output-spec-id=0 > out.txt 2> err.txt ||
  fail "sort rewrite into the old spec: $(cat err.txt)"
[ "$("$floe" scan ns.u | wc -l)" = 200 ] || fail "rows after the rewrite: $("$floe" scan ns.u | wc -l)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
