#!/usr/bin/env bash
# cherrypick_live.sh - `floe snapshots cherrypick` refuses a snapshot whose added data
# files main already has live, naming the file, exit 1 (as the other cherrypick refusals),
# and commits nothing; the rows would otherwise count twice (adversary finding on issue
# 24). Two ways a pick's files get into main without its id being in main's lineage:
#   - the snapshot an earlier pick made (source-snapshot-id = S), picked after main was
#     rolled back and S picked again;
#   - a Parquet file appended to a branch and, as well, to main.
# A pick of files main lacks still commits (the refusal is not a blanket one).
set -euo pipefail
name=cherrypick_live oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
jq1() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
floe_rows() { "$floe" scan "$@" --format canonical | wc -l | tr -d ' '; }
rows() { # N START: N rows
  python3 -c "import sys
n,s=int(sys.argv[1]),int(sys.argv[2])
for i in range(n): print('{\"k\":\"%s\",\"v\":%d}' % ('abc'[i%3], s+i))" "$1" "$2"
}
sid() { jq1 'd["snapshot_id"]'; }

# refused: exit 1, the message names the file and says why; metadata unchanged
refused() { # WHAT TABLE SNAPSHOT FILE-NAME
  local loc rc
  loc=$(meta "$2")
  set +e
  "$floe" snapshots cherrypick "$2" "$3" 2>"$tmp/err" >"$tmp/out"; rc=$?
  "$floe" snapshots cherrypick "$2" "$3" --json 2>/dev/null >"$tmp/out.json"; rcj=$?
  set -e
  [ $rc = 1 ] && grep -q "added .*$4, which is already a live data file of main" "$tmp/err" ||
    fail "$1: exit $rc, $(cat "$tmp/err")"
  [ $rcj = 1 ] && [ "$(jq1 'd["error"]["exit"], "live data file" in d["error"]["message"]' < "$tmp/out.json")" = "(1, True)" ] ||
    fail "$1 --json: exit $rcj, $(cat "$tmp/out.json")"
  [ "$(meta "$2")" = "$loc" ] || fail "$1: the refused pick committed"
}

# ---- an earlier pick's snapshot, picked after its source was picked again ---------------
"$floe" table create ns.r --schema "$tmp/s.json" >/dev/null
rows 10 0 > "$tmp/a.ndjson"; rows 5 100 > "$tmp/b.ndjson"; rows 7 1000 > "$tmp/c.ndjson"
m1=$("$floe" append ns.r "$tmp/a.ndjson" --json | sid)
"$floe" ref create ns.r b >/dev/null
s=$("$floe" append ns.r "$tmp/b.ndjson" --branch b --json | sid)
m2=$("$floe" append ns.r "$tmp/c.ndjson" --json | sid)
c1=$("$floe" snapshots cherrypick ns.r "$s" --json | sid)
[ "$(floe_rows ns.r)" = 22 ] || fail "rows after the first pick: $(floe_rows ns.r)"
"$floe" snapshots rollback ns.r --to "$m2" >/dev/null
"$floe" snapshots cherrypick ns.r "$s" >/dev/null
[ "$(floe_rows ns.r)" = 22 ] || fail "rows after picking again: $(floe_rows ns.r)"
file=$(basename "$("$floe" files ns.r --json | jq1 '[f["path"] for f in d if f["records"] == 5][0]')")
refused "pick of the earlier pick's snapshot" ns.r "$c1" "$file"
[ "$(floe_rows ns.r)" = 22 ] || fail "rows after the refused pick: $(floe_rows ns.r)"

# ---- a Parquet file appended to a branch and to main ---------------------------------------
"$floe" table create ns.p --schema "$tmp/s.json" >/dev/null
"$floe" append ns.p "$tmp/a.ndjson" >/dev/null
"$floe" ref create ns.p audit >/dev/null
"$floe" convert --schema "$tmp/s.json" "$tmp/b.ndjson" -o "$tmp/pq" >/dev/null
"$floe" convert --schema "$tmp/s.json" "$tmp/c.ndjson" -o "$tmp/pq2" >/dev/null
p1=$("$floe" append ns.p "$tmp/pq/part-00000.parquet" --branch audit --json | sid)
"$floe" append ns.p "$tmp/pq/part-00000.parquet" >/dev/null
[ "$(floe_rows ns.p)" = 15 ] || fail "rows of main: $(floe_rows ns.p)"
refused "pick of a branch snapshot whose file main has" ns.p "$p1" part-00000.parquet
[ "$(floe_rows ns.p)" = 15 ] || fail "rows after the refused pick: $(floe_rows ns.p)"

# ---- a file main lacks is still picked ------------------------------------------------------
p2=$("$floe" append ns.p "$tmp/pq2/part-00000.parquet" --branch audit --json | sid)
"$floe" snapshots cherrypick ns.p "$p2" --json > "$tmp/ok.json" || fail "pick of new files: $(cat "$tmp/ok.json")"
[ "$(jq1 'd["fast_forward"], d["added_files"], d["added_records"]' < "$tmp/ok.json")" = "(False, 1, 7)" ] ||
  fail "pick of new files: $(cat "$tmp/ok.json")"
[ "$(floe_rows ns.p)" = 22 ] || fail "rows after the pick of new files: $(floe_rows ns.p)"

[ $fails = 0 ] || exit 1
echo "cherrypick_live: ok"
