#!/usr/bin/env bash
# cli_escape_metadata.sh - issue 24: strings from table metadata (written by floe or by
# another engine: partition values, file paths, snapshot operations and summaries, ref
# names) never reach the terminal raw. floe files, snapshots, history, ref list, health
# (text and HTML) and rewrite --dry-run show control characters as \xHH, so a value holding
# ESC cannot drive the terminal and one holding a newline or tab cannot forge a line or a
# column; error messages too. New ref names with control characters are refused (exit 2).
set -euo pipefail
name=cli_escape_metadata oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

ctl=$(printf '[\001-\037\177]')
# $1: what ran; the rest: files that must hold no control character but the newlines and
# tabs of floe's own layout (a tab or newline inside a value is checked by line counts)
no_raw() {
  local what=$1; shift
  if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$@"; then
    fail "$what prints raw control characters: $(LC_ALL=C grep -h "$ctl" "$@" | od -c | head -4)"
  fi
}

# -- a partition value with ESC, <, newline, tab and a quote --------------------------
"$floe" table create ns.p --schema s.json --partition k >/dev/null
python3 -c '
import json
for i in range(3): print(json.dumps({"k": "a\u001b[2J<b>x</b>\nc\t'"'"'q", "v": i}))' > p.ndjson
for _ in 1 2 3; do "$floe" append ns.p p.ndjson >/dev/null; done
"$floe" files ns.p > out.txt
no_raw "files (partition)" out.txt
[ "$(wc -l < out.txt)" = 3 ] || fail "files: $(wc -l < out.txt) lines for 3 files"
"$floe" rewrite ns.p --dry-run --option min-input-files=1 > out.txt
no_raw "rewrite --dry-run" out.txt
grep -q '^  group 1 (partition k=a%1B' out.txt || fail "rewrite --dry-run: $(tail -1 out.txt)"
"$floe" health ns.p --runs 0 --no-listing --html h.html > out.txt
no_raw "health" out.txt
grep -qF "point query: k = 'a\\x1b[2J<b>x</b>\\x0ac\\x09''q'" out.txt ||
  fail "health point query: $(grep 'point query:' out.txt | head -1)"
no_raw "health --html" h.html
if grep -q '<b>x' h.html; then fail "health --html: a value is not HTML-escaped"; fi
grep -qF '&lt;b&gt;x' h.html || fail "health --html: the value is missing"

# -- a Parquet file whose name holds ESC, a tab and a newline, appended as it is ------
"$floe" table create ns.u --schema s.json >/dev/null
printf '{"k":"a","v":1}\n' > u.ndjson
"$floe" convert --schema s.json -o conv u.ndjson >/dev/null
odd=$(printf 'x\033[2J\ty\nz.parquet')
mv conv/part-00000.parquet "$odd"
"$floe" append ns.u "$odd" >/dev/null
"$floe" files ns.u > out.txt
no_raw "files (path)" out.txt
[ "$(wc -l < out.txt)" = 1 ] || fail "files: a newline in a path forged a line: $(cat out.txt)"
grep -qF 'x\x1b[2J\x09y\x0az.parquet' out.txt || fail "files: $(cat out.txt)"

# -- metadata another engine wrote: operation, summary values, a ref name -------------
"$floe" append ns.u u.ndjson --summary "added-note=$(printf 'n\033[2J')" >/dev/null
other=$(dirname "$(meta ns.u)")/other.metadata.json
python3 - "$(meta ns.u)" "$other" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
s = m["snapshots"][-1]
s["summary"]["operation"] = "app\u001b[2Jend"
s["summary"]["total-records"] = "2\u001b[31m"
m["refs"]["r\u001b[2J\nforged"] = {"snapshot-id": s["snapshot-id"], "type": "tag"}
json.dump(m, open(sys.argv[2], "w"))
EOF
"$floe" snapshots "$other" > out.txt
no_raw "snapshots" out.txt
grep -qF 'app\x1b[2Jend' out.txt && grep -qF '2\x1b[31m' out.txt || fail "snapshots: $(tail -1 out.txt)"
[ "$(wc -l < out.txt)" = 3 ] || fail "snapshots: $(wc -l < out.txt) lines"
"$floe" history "$other" > out.txt
no_raw "history" out.txt
grep -qF 'app\x1b[2Jend' out.txt || fail "history: $(tail -1 out.txt)"
"$floe" ref list "$other" > out.txt
no_raw "ref list" out.txt
grep -qF 'r\x1b[2J\x0aforged' out.txt || fail "ref list: $(cat out.txt)"
"$floe" health "$other" --runs 0 --no-listing > out.txt
no_raw "health (other engine)" out.txt

# -- ref names: a new one with control characters is refused; errors are one line ----
for bad in "$(printf 'r\033[2J')" "$(printf 'a\nb')" ""; do
  rc=0; "$floe" ref create ns.u "$bad" > out.txt 2> err.txt || rc=$?
  [ $rc = 2 ] || fail "ref create $(printf %q "$bad"): exit $rc"
  [ "$(wc -l < err.txt)" = 1 ] || fail "ref create $(printf %q "$bad"): $(cat err.txt)"
  no_raw "ref create" err.txt
done
[ "$("$floe" ref list ns.u --json)" = '[{"name":"main","type":"branch","snapshot_id":'"$("$floe" snapshots ns.u --json | python3 -c 'import json,sys; print([s["snapshot_id"] for s in json.load(sys.stdin) if s["current"]][0])')"'}]' ] ||
  fail "a refused ref was made: $("$floe" ref list ns.u)"
rc=0; "$floe" append ns.u u.ndjson --branch "$(printf 'b\033[2J\nx')" > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] || fail "append --branch (missing, control characters): exit $rc"
[ "$(wc -l < err.txt)" = 1 ] && grep -qF 'no branch named b\x1b[2J\x0ax' err.txt ||
  fail "append --branch error: $(od -c err.txt | head -3)"
rc=0; "$floe" table describe "$(printf 'ns.n\033[2J')" > out.txt 2> err.txt || rc=$?
[ $rc != 0 ] || fail "describe of a missing table"
no_raw "an error message" err.txt

[ $fails = 0 ] || exit 1
echo "$name: ok"
