#!/usr/bin/env bash
# snapshot_refs.sh - `floe snapshots rollback|set-current|cherrypick`, `floe ref
# create|replace|drop|list|fast-forward`, `floe history`, and `floe expire` keeping what
# refs retain (format/spec.md "Snapshot References", "Snapshot Retention Policy").
# Checked by the metadata file each command commits (read as JSON here, not by floe), by
# the rows icebird (an independent reader) and floe scan give for the table afterwards,
# and by the set of snapshots expire keeps:
#   - rollback to an ancestor (by id, by epoch ms and by ISO time), refused for a
#     non-ancestor and a time before the first snapshot; set-current to any snapshot;
#     current-snapshot-id, refs.main and the snapshot-log move together; a repeat commits
#     nothing; history shows the log with is_current_ancestor;
#   - refs with retention settings written as the spec names them; tag-only and
#     branch-only settings refused; replace keeps what it is not told; fast-forward only
#     forward; main cannot be dropped;
#   - cherrypick: fast-forward when the parent is main's head, else a new append snapshot
#     with the picked files and source-snapshot-id; a second pick, a pick of an ancestor,
#     and a pick of a tagged snapshot whose place in main's expired history is unknown are
#     refused;
#   - append --branch (write-audit-publish): only the branch moves, main's readers see
#     nothing until a fast-forward or cherrypick publishes it; --once looks in the
#     branch's lineage; a missing branch or a tag is refused;
#   - expire --older-than 0s keeps ref heads, a branch's min-snapshots-to-keep history,
#     and drops a tag past its max-ref-age-ms (and the snapshot only it kept).
set -euo pipefail
name=snapshot_refs oracle=icebird
. "$(dirname "$0")/lib/table_cli_common.sh"
jq1() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
# rows of the current snapshot as icebird reads the table, and as floe scan does
icebird_rows() { (cd "$js" && node icebird_read.mjs --metadata "$(meta "$1")" --count); }
floe_rows() { "$floe" scan "$@" --format canonical | wc -l | tr -d ' '; }
rows() { # N START: N rows
  python3 -c "import sys
n,s=int(sys.argv[1]),int(sys.argv[2])
for i in range(n): print('{\"k\":\"%s\",\"v\":%d}' % ('abc'[i%3], s+i))" "$1" "$2"
}
append() { # TABLE N START -> snapshot id
  rows "$2" "$3" > "$tmp/in.ndjson"
  "$floe" append "$1" "$tmp/in.ndjson" --json | jq1 'd["snapshot_id"]'
  sleep 0.05 # distinct snapshot times
}

"$floe" table create ns.r --schema "$tmp/s.json" >/dev/null
s1=$(append ns.r 10 0)
s2=$(append ns.r 20 100)
s3=$(append ns.r 30 1000)
cur() { mq ns.r 'm["current-snapshot-id"], m["refs"]["main"]["snapshot-id"], m["snapshot-log"][-1]["snapshot-id"]'; }

# ---- rollback / set-current ------------------------------------------------------------
"$floe" snapshots rollback ns.r --to "$s1" --json > "$tmp/rb.json"
[ "$(jq1 'd["previous_snapshot_id"], d["current_snapshot_id"], d["changed"]' < "$tmp/rb.json")" = "($s3, $s1, True)" ] ||
  fail "rollback --json: $(cat "$tmp/rb.json")"
[ "$(cur)" = "($s1, $s1, $s1)" ] || fail "rollback: current, main, log = $(cur)"
[ "$(icebird_rows ns.r)" = 10 ] && [ "$(floe_rows ns.r)" = 10 ] || fail "rows after rollback: icebird $(icebird_rows ns.r), floe $(floe_rows ns.r)"
set +e
"$floe" snapshots rollback ns.r --to "$s3" 2>"$tmp/e1"; rc=$?
set -e
[ $rc = 1 ] && grep -q "not an ancestor" "$tmp/e1" || fail "rollback to a non-ancestor: exit $rc, $(cat "$tmp/e1")"
"$floe" snapshots set-current ns.r "$s3" >/dev/null
[ "$(cur)" = "($s3, $s3, $s3)" ] || fail "set-current: $(cur)"
[ "$(icebird_rows ns.r)" = 60 ] || fail "rows after set-current: $(icebird_rows ns.r)"
loc=$(meta ns.r)
"$floe" snapshots set-current ns.r "$s3" --json | grep -q '"changed":false' || fail "a repeated set-current reported a change"
[ "$(meta ns.r)" = "$loc" ] || fail "a repeated set-current committed"
# by time: epoch ms of s2, then an ISO time between s1 and s2
t2=$(mq ns.r '[s["timestamp-ms"] for s in m["snapshots"] if s["snapshot-id"] == '"$s2"'][0]')
"$floe" snapshots rollback ns.r --to "$t2" >/dev/null
[ "$(cur)" = "($s2, $s2, $s2)" ] || fail "rollback --to $t2 (epoch ms): $(cur)"
iso=$(python3 -c 'import datetime,sys; print(datetime.datetime.fromtimestamp((int(sys.argv[1]) - 1) / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z")' "$t2")
"$floe" snapshots rollback ns.r --to "$iso" >/dev/null
[ "$(cur)" = "($s1, $s1, $s1)" ] || fail "rollback --to $iso: $(cur)"
set +e
"$floe" snapshots rollback ns.r --to 2001-01-01 2>"$tmp/e2"; rc=$?
set -e
[ $rc = 1 ] && grep -q "no snapshot of main's history was made at or before 2001-01-01" "$tmp/e2" ||
  fail "rollback before the first snapshot: exit $rc, $(cat "$tmp/e2")"
"$floe" snapshots set-current ns.r "$s3" >/dev/null

# history: every move, with ancestry
"$floe" history ns.r --json > "$tmp/h.json"
[ "$(jq1 '[(e["snapshot_id"], e["is_current_ancestor"], e["operation"]) for e in d]' < "$tmp/h.json")" = \
  "[($s1, True, 'append'), ($s2, True, 'append'), ($s3, True, 'append'), ($s1, True, 'append'), ($s3, True, 'append'), ($s2, True, 'append'), ($s1, True, 'append'), ($s3, True, 'append')]" ] ||
  fail "history: $(cat "$tmp/h.json")"
[ "$(jq1 'd[1]["summary"]["added-records"], d[1]["parent_snapshot_id"]' < "$tmp/h.json")" = "('20', $s1)" ] || fail "history summary"
grep -q "^.*$s2 .*append .*added-records=20" <<< "$("$floe" history ns.r)" || fail "history text: $("$floe" history ns.r)"

# ---- refs ------------------------------------------------------------------------------
"$floe" ref create ns.r audit --min-snapshots-to-keep 2 --max-snapshot-age-ms 1h --json > "$tmp/r1.json"
grep -q '"changed":true' "$tmp/r1.json" || fail "ref create --json: $(cat "$tmp/r1.json")"
"$floe" ref create ns.r t1 --tag --snapshot "$s1" --max-ref-age-ms 7d >/dev/null
[ "$(mq ns.r 'sorted(m["refs"]["audit"].items()), sorted(m["refs"]["t1"].items())')" = \
  "([('max-snapshot-age-ms', 3600000), ('min-snapshots-to-keep', 2), ('snapshot-id', $s3), ('type', 'branch')], [('max-ref-age-ms', 604800000), ('snapshot-id', $s1), ('type', 'tag')])" ] ||
  fail "refs in the metadata: $(mq ns.r 'm["refs"]')"
set +e
"$floe" ref create ns.r t2 --tag --min-snapshots-to-keep 3 2>"$tmp/e3"; rc3=$?
"$floe" ref create ns.r audit 2>"$tmp/e4"; rc4=$?
"$floe" ref drop ns.r main 2>"$tmp/e5"; rc5=$?
"$floe" ref replace ns.r main --max-ref-age-ms 1d 2>"$tmp/e6"; rc6=$?
set -e
[ $rc3 = 2 ] && grep -q 'branches only' "$tmp/e3" || fail "tag with min-snapshots-to-keep: exit $rc3, $(cat "$tmp/e3")"
[ $rc4 = 1 ] && grep -q 'already exists' "$tmp/e4" || fail "create an existing ref: exit $rc4"
[ $rc5 = 1 ] || fail "drop main: exit $rc5"
[ $rc6 = 2 ] && grep -q 'main branch' "$tmp/e6" || fail "max-ref-age-ms on main: exit $rc6, $(cat "$tmp/e6")"
"$floe" ref replace ns.r audit --snapshot "$s2" >/dev/null
[ "$(mq ns.r 'sorted(m["refs"]["audit"].items())')" = \
  "[('max-snapshot-age-ms', 3600000), ('min-snapshots-to-keep', 2), ('snapshot-id', $s2), ('type', 'branch')]" ] ||
  fail "replace kept the retention: $(mq ns.r 'm["refs"]["audit"]')"
"$floe" ref replace ns.r audit --max-snapshot-age-ms none >/dev/null
[ "$(mq ns.r 'sorted(m["refs"]["audit"])')" = "['min-snapshots-to-keep', 'snapshot-id', 'type']" ] || fail "retention none"
[ "$(floe_rows ns.r --ref audit)" = 30 ] && [ "$(floe_rows ns.r --ref t1)" = 10 ] || fail "scan by ref"
"$floe" ref create ns.r b --snapshot "$s1" >/dev/null
"$floe" ref fast-forward ns.r b audit >/dev/null
[ "$(mq ns.r 'm["refs"]["b"]["snapshot-id"]')" = "$s2" ] || fail "fast-forward b to audit"
set +e
"$floe" ref fast-forward ns.r main b 2>"$tmp/e7"; rc=$?
set -e
[ $rc = 1 ] && grep -q 'not an ancestor' "$tmp/e7" || fail "fast-forward backwards: exit $rc, $(cat "$tmp/e7")"
"$floe" ref drop ns.r t1 >/dev/null
"$floe" ref list ns.r --json > "$tmp/l.json"
[ "$(jq1 'sorted((r["name"], r["type"], r["snapshot_id"]) for r in d)' < "$tmp/l.json")" = \
  "[('audit', 'branch', $s2), ('b', 'branch', $s2), ('main', 'branch', $s3)]" ] || fail "ref list: $(cat "$tmp/l.json")"

# ---- cherrypick --------------------------------------------------------------------------
"$floe" snapshots rollback ns.r --to "$s2" >/dev/null
"$floe" snapshots cherrypick ns.r "$s3" --json > "$tmp/c1.json"
[ "$(jq1 'd["fast_forward"], d["snapshot_id"]' < "$tmp/c1.json")" = "(True, $s3)" ] || fail "cherrypick as fast-forward: $(cat "$tmp/c1.json")"
[ "$(cur)" = "($s3, $s3, $s3)" ] || fail "after the fast-forward pick: $(cur)"
"$floe" snapshots rollback ns.r --to "$s1" >/dev/null
"$floe" snapshots cherrypick ns.r "$s3" --json > "$tmp/c2.json"
new=$(jq1 'd["snapshot_id"]' < "$tmp/c2.json")
[ "$(jq1 'd["fast_forward"], d["added_files"], d["added_records"]' < "$tmp/c2.json")" = "(False, 1, 30)" ] || fail "cherrypick: $(cat "$tmp/c2.json")"
[ "$(mq ns.r '[(s["parent-snapshot-id"], s["summary"]["operation"], s["summary"]["source-snapshot-id"]) for s in m["snapshots"] if s["snapshot-id"] == '"$new"']')" = \
  "[($s1, 'append', '$s3')]" ] || fail "the picked snapshot: $(mq ns.r 'm["snapshots"][-1]')"
[ "$(cur)" = "($new, $new, $new)" ] || fail "after the pick: $(cur)"
"$floe" history ns.r --json | jq1 '[e["is_current_ancestor"] for e in d if e["snapshot_id"] == '"$s3"']' | grep -qx '\[False, False, False, False\]' ||
  fail "history after the pick: $s3 is still an ancestor? $("$floe" history ns.r)"
[ "$(icebird_rows ns.r)" = 40 ] && [ "$(floe_rows ns.r)" = 40 ] || fail "rows after the pick: icebird $(icebird_rows ns.r), floe $(floe_rows ns.r)"
set +e
"$floe" snapshots cherrypick ns.r "$s3" 2>"$tmp/e8"; rc8=$?
"$floe" snapshots cherrypick ns.r "$s1" 2>"$tmp/e9"; rc9=$?
set -e
[ $rc8 = 1 ] && grep -q "already cherry-picked as $new" "$tmp/e8" || fail "second pick: exit $rc8, $(cat "$tmp/e8")"
[ $rc9 = 1 ] && grep -q "already in the current snapshot's history" "$tmp/e9" || fail "pick of an ancestor: exit $rc9, $(cat "$tmp/e9")"

# ---- expire keeps what refs retain ---------------------------------------------------------
"$floe" table create ns.e --schema "$tmp/s.json" >/dev/null
e1=$(append ns.e 5 0); e2=$(append ns.e 5 10); e3=$(append ns.e 5 20); e4=$(append ns.e 5 30); e5=$(append ns.e 5 40)
"$floe" ref create ns.e keep --tag --snapshot "$e1" >/dev/null
"$floe" ref create ns.e br --snapshot "$e3" --min-snapshots-to-keep 2 >/dev/null
ids() { mq ns.e 'sorted(s["snapshot-id"] for s in m["snapshots"])'; }
want() { python3 -c 'import sys; print(sorted(int(x) for x in sys.argv[1:]))' "$@"; }
"$floe" expire ns.e --older-than 0s --json >/dev/null
[ "$(ids)" = "$(want "$e1" "$e2" "$e3" "$e5")" ] || fail "expire with a tag and a branch keeping 2: kept $(ids), want e1 e2 e3 e5"
[ "$(floe_rows ns.e --ref br)" = 15 ] && [ "$(floe_rows ns.e --ref keep)" = 5 ] && [ "$(floe_rows ns.e)" = 25 ] ||
  fail "rows by ref after expire"
"$floe" ref replace ns.e keep --max-ref-age-ms 1ms >/dev/null
"$floe" ref replace ns.e br --min-snapshots-to-keep 1 >/dev/null
"$floe" expire ns.e --older-than 0s >/dev/null
[ "$(ids)" = "$(want "$e3" "$e5")" ] || fail "expire after the tag aged out and br keeps 1: kept $(ids), want e3 e5"
[ "$(mq ns.e 'sorted(m["refs"])')" = "['br', 'main']" ] || fail "the aged tag was not removed: $(mq ns.e 'm["refs"]')"
[ "$(icebird_rows ns.e)" = 25 ] && [ "$(floe_rows ns.e --ref br)" = 15 ] || fail "rows after the second expire"

# ---- write-audit-publish: append --branch ----------------------------------------------------
"$floe" table create ns.w --schema "$tmp/s.json" >/dev/null
w1=$(append ns.w 10 0)
"$floe" ref create ns.w audit >/dev/null
rows 20 100 > "$tmp/wap.ndjson"
"$floe" append ns.w "$tmp/wap.ndjson" --branch audit --once batch=b1 --json > "$tmp/wap.json"
wa=$(jq1 'd["snapshot_id"]' < "$tmp/wap.json")
[ "$(jq1 'd["branch"], d["added_records"]' < "$tmp/wap.json")" = "('audit', 20)" ] || fail "append --branch --json: $(cat "$tmp/wap.json")"
[ "$(mq ns.w 'm["current-snapshot-id"], m["refs"]["main"]["snapshot-id"], m["refs"]["audit"]["snapshot-id"], [s.get("parent-snapshot-id") for s in m["snapshots"] if s["snapshot-id"] == '"$wa"'], [e["snapshot-id"] for e in m["snapshot-log"]]')" = \
  "($w1, $w1, $wa, [$w1], [$w1])" ] || fail "after append --branch: $(mq ns.w 'm["refs"], m["snapshot-log"]')"
[ "$(icebird_rows ns.w)" = 10 ] && [ "$(floe_rows ns.w)" = 10 ] && [ "$(floe_rows ns.w --ref audit)" = 30 ] ||
  fail "rows: main (icebird) $(icebird_rows ns.w), main $(floe_rows ns.w), audit $(floe_rows ns.w --ref audit)"
"$floe" append ns.w "$tmp/wap.ndjson" --branch audit --once batch=b1 --json | grep -q '"noop":true' ||
  fail "--once on a branch did not find its marker"
set +e
"$floe" append ns.w "$tmp/wap.ndjson" --branch nosuch 2>"$tmp/e10"; rc10=$?
"$floe" ref create ns.w tg --tag >/dev/null
"$floe" append ns.w "$tmp/wap.ndjson" --branch tg 2>"$tmp/e11"; rc11=$?
set -e
[ $rc10 = 1 ] && grep -q 'no branch named nosuch' "$tmp/e10" || fail "append to a missing branch: exit $rc10, $(cat "$tmp/e10")"
[ $rc11 = 1 ] && grep -q 'tg is a tag' "$tmp/e11" || fail "append to a tag: exit $rc11, $(cat "$tmp/e11")"
# publish by fast-forward
"$floe" ref fast-forward ns.w main audit >/dev/null
[ "$(mq ns.w 'm["current-snapshot-id"], m["snapshot-log"][-1]["snapshot-id"]')" = "($wa, $wa)" ] || fail "publish by fast-forward"
[ "$(icebird_rows ns.w)" = 30 ] || fail "rows after publishing: $(icebird_rows ns.w)"
# main moves on; the next audited batch is published by cherrypick
"$floe" append ns.w "$tmp/wap.ndjson" --branch audit >/dev/null
wb=$(mq ns.w 'm["refs"]["audit"]["snapshot-id"]')
w3=$(append ns.w 5 5000)
set +e
"$floe" ref fast-forward ns.w main audit 2>/dev/null; rc=$?
set -e
[ $rc = 1 ] || fail "fast-forward of a diverged main: exit $rc"
"$floe" snapshots cherrypick ns.w "$wb" >/dev/null
[ "$(mq ns.w '[(s["parent-snapshot-id"], s["summary"]["source-snapshot-id"]) for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"]]')" = "[($w3, '$wb')]" ] ||
  fail "publish by cherrypick"
[ "$(icebird_rows ns.w)" = 55 ] && [ "$(floe_rows ns.w)" = 55 ] || fail "rows after the cherrypick: $(icebird_rows ns.w)"

# a tagged snapshot that main held, whose history since then has expired: whether it is
# still in main's history cannot be told, so it is refused (and no row is added twice)
"$floe" table create ns.x --schema "$tmp/s.json" >/dev/null
x1=$(append ns.x 5 0); x2=$(append ns.x 5 10); x3=$(append ns.x 5 20)
"$floe" ref create ns.x t2 --tag --snapshot "$x2" >/dev/null
"$floe" rewrite ns.x --option rewrite-all=true >/dev/null
"$floe" expire ns.x --older-than 2099-01-01T00:00:00Z --retain-last 1 >/dev/null
[ "$(mq ns.x '[s["snapshot-id"] for s in m["snapshots"] if s["snapshot-id"] in ('"$x1, $x3"')]')" = "[]" ] ||
  fail "expire kept main's history: $(mq ns.x '[s["snapshot-id"] for s in m["snapshots"]]')"
set +e
"$floe" snapshots cherrypick ns.x "$x2" 2>"$tmp/e10"; rc10=$?
set -e
[ $rc10 = 1 ] && grep -q "history before snapshot .* has expired" "$tmp/e10" ||
  fail "pick of a tagged snapshot main once held: exit $rc10, $(cat "$tmp/e10")"
[ "$(floe_rows ns.x)" = 15 ] || fail "rows after the refused pick: $(floe_rows ns.x)"

[ $fails = 0 ] || exit 1
echo "snapshot_refs: ok"
