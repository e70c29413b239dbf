#!/usr/bin/env bash
# cli_flags_sort.sh - issue 24, one argument style across commands (adversary findings
# adv24b 1-4): -q is --quiet in convert, append and rewrite (convert's quarantine is
# --quarantine only); --threads N (0: all cores) in all three; a bad rewrite --sort-order
# or an option only a z-order takes is a usage error (exit 2, "floe rewrite:"), as the
# same text is for floe table sort-order;
# zorder(...) takes column names as the linear sort order does (bare, `quoted` or
# "quoted", so names with ',' or ')' can be z-ordered); catalog show says where a SQLite
# catalog named by a relative sqlite:/// path is, and floe serve reads that path as every
# other command does (relative).
set -euo pipefail
name=cli_flags_sort oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

# $1: what; the rest: the floe command, which must exit 2 with one line naming the command
expect_usage() {
  local what=$1 rc=0; shift
  "$floe" "$@" > out.txt 2> err.txt || rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, $(cat err.txt)"
  [ "$(wc -l < err.txt)" = 1 ] || fail "$what: $(cat err.txt)"
  grep -q "^floe $1: " err.txt || fail "$what: $(cat err.txt)"
}

# -- -q is --quiet everywhere ------------------------------------------------------------
printf '{"k":"a","v":1}\n{"k":"b","v":"x"}\n' > in.ndjson
"$floe" convert -q --schema s.json -o conv --quarantine bad.ndjson in.ndjson > out.txt 2> err.txt ||
  fail "convert -q: $(cat err.txt)"
[ -s bad.ndjson ] && grep -q 'type_mismatch' bad.ndjson || fail "convert --quarantine: $(ls)"
[ -f conv/part-00000.parquet ] || fail "convert -q wrote no file"
"$floe" convert --help | grep -q -- '-q, --quiet' || fail "convert --help: -q is not --quiet"
if "$floe" convert --help | grep -q -- '-q, --quarantine'; then fail "convert --help: -q still --quarantine"; fi
"$floe" table create ns.t --schema s.json --partition k >/dev/null
printf '{"k":"a","v":1}\n' > a.ndjson
for _ in 1 2 3; do "$floe" append ns.t a.ndjson -q >/dev/null || fail "append -q"; done
"$floe" append --help | grep -q -- '--quiet, -q' || fail "append --help: $("$floe" append --help | grep quiet)"
"$floe" rewrite ns.t -q -o min-input-files=2 >/dev/null || fail "rewrite -q"
# --threads N as convert and append take it (0: all cores)
"$floe" rewrite ns.t --threads 0 --dry-run >/dev/null || fail "rewrite --threads 0"
expect_usage "rewrite --threads x" rewrite ns.t --threads x --dry-run
"$floe" append ns.t a.ndjson --threads 0 -q >/dev/null || fail "append --threads 0"

# -- rewrite: the sort order and z-order options are the caller's arguments (exit 2) --
for so in "nope DESC" "k SIDEWAYS" "zorder()" "zorder(v, v)" "zorder(nope)" 'zorder("v" x)' 'zorder("v)'; do
  expect_usage "rewrite --sort-order '$so'" rewrite ns.t --strategy sort --sort-order "$so" --dry-run
done
expect_usage "max-output-size without zorder" rewrite ns.t -o max-output-size=1 --dry-run
expect_usage "var-length-contribution too large" rewrite ns.t --strategy sort --sort-order "zorder(v)" \
  -o var-length-contribution=99999999999 --dry-run
grep -q "more than the largest value" err.txt || fail "too large said as: $(cat err.txt)"
expect_usage "sort order without --strategy sort" rewrite ns.t --sort-order "v" --dry-run

# -- zorder names as the linear form writes them ----------------------------------------
python3 -c '
import json
print(json.dumps({"type": "struct", "fields": [
    {"id": 1, "name": "Average Weight", "required": False, "type": "double"},
    {"id": 2, "name": "a,b", "required": False, "type": "long"},
    {"id": 3, "name": "f(x)", "required": False, "type": "string"}]}))' > q.json
"$floe" table create ns.q --schema q.json >/dev/null
printf '{"Average Weight":1.5,"a,b":2,"f(x)":"s"}\n' > q.ndjson
for _ in 1 2; do "$floe" append ns.q q.ndjson >/dev/null; done
for so in 'zorder("Average Weight", `a,b`)' 'zorder(`Average Weight`, "f(x)")' 'zorder(Average Weight)' \
          'zorder("a,b", "f(x)")' 'zorder(`f(x)`, Average Weight)'; do
  "$floe" rewrite ns.q --strategy sort --sort-order "$so" --dry-run -o rewrite-all=true > out.txt 2> err.txt ||
    fail "rewrite --sort-order '$so': $(cat err.txt)"
done
"$floe" rewrite ns.q --strategy sort --sort-order 'zorder("Average Weight", `a,b`)' -o rewrite-all=true >/dev/null ||
  fail "z-order rewrite with quoted names"
[ "$("$floe" scan ns.q | python3 -c 'import json,sys; print(sum(1 for l in sys.stdin if l.strip()))')" = 2 ] ||
  fail "rows after the z-order rewrite: $("$floe" scan ns.q)"

# -- catalog show: where a sqlite:/// (relative) database is ----------------------------
mkdir -p sub && cd sub
FLOE_CATALOG_URI=sqlite:///x/cat.db "$floe" catalog show > ../out.txt
grep -qx "database:  $tmp/sub/x/cat.db" ../out.txt || fail "catalog show: $(cat ../out.txt)"
FLOE_CATALOG_URI=sqlite:////abs/cat.db "$floe" catalog show --json | grep -q '"database":"/abs/cat.db"' ||
  fail "catalog show --json: $(FLOE_CATALOG_URI=sqlite:////abs/cat.db "$floe" catalog show --json)"
# floe serve reads the same URI the same way (it took sqlite:///x as /x)
"$floe" serve --catalog sqlite:///x2/cat.db --warehouse "$tmp/swh" --listen 127.0.0.1:0 \
  --port-file "$tmp/sport" 2> "$tmp/serve.log" &
spid=$!
for _ in $(seq 400); do [ -s "$tmp/sport" ] && break; kill -0 $spid 2>/dev/null || break; sleep 0.05; done
kill -TERM $spid 2>/dev/null || true
wait $spid 2>/dev/null || true
[ -f "$tmp/sub/x2/cat.db" ] || fail "serve --catalog sqlite:///x2/cat.db: $(ls -R "$tmp/sub" | head; tail -3 "$tmp/serve.log")"
cd ..

[ $fails = 0 ] || exit 1
echo "$name: ok"
