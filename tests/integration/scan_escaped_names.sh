#!/usr/bin/env bash
# scan_escaped_names.sh - floe scan reads columns whose names JSON must escape ('"', '\',
# a control byte): the reader's row text carries such names escaped, and the scan finds
# each column in it by the escaped spelling, so the values come back (not null), also
# after a rename to such a name, through a struct field so named, in --where and
# --columns, in every output format, and after floe rewrite compacts the files.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "scan_escaped_names: FAIL: $*" >&2; fails=$((fails + 1)); }
export FLOE_CATALOG_URI="$tmp/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=test
unset FLOE_CONFIG FLOE_CATALOG_TYPE || true
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
command -v python3 >/dev/null || { echo "scan_escaped_names: SKIP: no python3"; exit 77; }

# expect WHAT GOT WANT: the scan output equals WANT (both compared as JSON lines)
expect() {
  python3 -c 'import json,sys
got=[json.loads(l) for l in sys.argv[1].splitlines() if l.strip()]
want=[json.loads(l) for l in sys.argv[2].splitlines() if l.strip()]
sys.exit(0 if got == want else 1)' "$2" "$3" || fail "$1: got $2, want $3"
}

cat > "$tmp/s.json" <<'J'
{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"q\"x","required":false,"type":"int"},
 {"id":2,"name":"c,d","required":false,"type":"int"},
 {"id":3,"name":"e\\f","required":false,"type":"int"},
 {"id":4,"name":"plain","required":false,"type":"int"},
 {"id":5,"name":"s\"t","required":false,"type":{"type":"struct","fields":[
   {"id":6,"name":"in\\\"ner","required":false,"type":"string"}]}},
 {"id":7,"name":"tab\there","required":false,"type":"int"}]}
J
cat > "$tmp/rows.ndjson" <<'J'
{"q\"x":1,"c,d":2,"e\\f":3,"plain":4,"s\"t":{"in\\\"ner":"a"},"tab\there":5}
{"q\"x":10,"c,d":20,"e\\f":30,"plain":40,"s\"t":{"in\\\"ner":"b"},"tab\there":50}
J
"$floe" namespace create ns >/dev/null
"$floe" table create ns.q --schema "$tmp/s.json" >/dev/null
"$floe" append ns.q "$tmp/rows.ndjson" >/dev/null

all='{"q\"x":1,"c,d":2,"e\\f":3,"plain":4,"s\"t":{"in\\\"ner":"a"},"tab\there":5}
{"q\"x":10,"c,d":20,"e\\f":30,"plain":40,"s\"t":{"in\\\"ner":"b"},"tab\there":50}'
expect "scan" "$("$floe" scan ns.q)" "$all"
expect "scan --format canonical" "$("$floe" scan ns.q --format canonical)" "$all"
csv=$("$floe" scan ns.q --format csv | tail -n +2 | head -1)
[ "$csv" = '1,2,3,4,"{""in\\\""ner"":""a""}",5' ] || fail "scan --format csv: row $csv"

# --where on such columns, top level and nested
expect "--where q\"x" "$("$floe" scan ns.q --where '"q""x" = 10' --columns plain)" '{"plain":40}'
expect "--where e\\f" "$("$floe" scan ns.q --where '"e\f" < 10' --columns plain)" '{"plain":4}'
expect "--where nested" "$("$floe" scan ns.q --where '"s""t"."in\""ner" = '"'b'" --columns plain)" \
  '{"plain":40}'
# a quoted name is one name, dots and all: "s""t.in\""ner" is no column
rc=0; "$floe" scan ns.q --where '"s""t.in\""ner" = '"'b'" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q 'no column "s""t.in' "$tmp/err" || fail "a quoted dotted name: exit $rc, $(cat "$tmp/err")"
# --columns naming them, and a nested path through the quoted struct
expect "--columns" "$("$floe" scan ns.q --columns 'q"x,e\f' --where 'plain = 4')" \
  '{"q\"x":1,"e\\f":3}'
expect "--columns nested" "$("$floe" scan ns.q --columns 's"t.in\"ner' --where 'plain = 4')" \
  '{"s\"t.in\\\"ner":"a"}'

# a rename to a name with '"' keeps the column's values (matched by field id)
"$floe" table schema ns.q rename-column plain 'pl"ain' >/dev/null
"$floe" table schema ns.q rename-column 'c,d' 'c\d' >/dev/null
expect "after rename" "$("$floe" scan ns.q --columns 'pl"ain,c\d')" \
  '{"pl\"ain":4,"c\\d":2}
{"pl\"ain":40,"c\\d":20}'
expect "after rename --where" "$("$floe" scan ns.q --where '"pl""ain" > 5 AND "c\d" = 20' \
  --columns 'q"x')" '{"q\"x":10}'

# files written under both names, compacted by floe rewrite: the same rows
printf '%s\n' '{"q\"x":100,"c\\d":200,"e\\f":300,"pl\"ain":400,"s\"t":{"in\\\"ner":"c"},"tab\there":500}' \
  > "$tmp/more.ndjson"
"$floe" append ns.q "$tmp/more.ndjson" >/dev/null
sorted() { python3 -c 'import json,sys; print(sorted(json.dumps(json.loads(l), sort_keys=True) for l in sys.stdin if l.strip()))'; }
before=$("$floe" scan ns.q | sorted)
case $before in *null*|'[]') fail "before rewrite: $before" ;; esac
"$floe" rewrite ns.q --option min-input-files=2 > "$tmp/rw.out" 2>&1 || fail "rewrite: $(cat "$tmp/rw.out")"
after=$("$floe" scan ns.q | sorted)
[ "$after" = "$before" ] || fail "after rewrite: $after, before: $before"
case $after in *null*) fail "after rewrite: nulls: $after" ;; esac

# a top-level column named a.b beside a struct a with a field b: a.b is the field, `a.b`
# and "a.b" the column, in floe scan, floe cat and floe rewrite --where
cat > "$tmp/dot.json" <<'J'
{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"a.b","required":false,"type":"long"},
 {"id":2,"name":"a","required":false,"type":{"type":"struct","fields":[
   {"id":3,"name":"b","required":false,"type":"long"}]}},
 {"id":4,"name":"n","required":false,"type":"int"}]}
J
printf '%s\n' '{"a.b":1,"a":{"b":2},"n":1}' '{"a.b":2,"a":{"b":1},"n":2}' > "$tmp/dot.ndjson"
"$floe" table create ns.dot --schema "$tmp/dot.json" >/dev/null
"$floe" append ns.dot "$tmp/dot.ndjson" >/dev/null
dotfile=$(find "$tmp/wh" -path '*dot*' -name '*.parquet' | head -1)
for w in 'a.b = 1:2' '`a.b` = 1:1' '"a.b" = 1:1' '`a`.`b` = 1:2' 'a."b" = 1:2' '"a".b = 1:2' \
         '`a.b` = 1 AND a.b = 2:1' '`a``b` IS NULL:' '"a""b" IS NULL:'; do
  where=${w%:*} want=${w##*:}
  got=$("$floe" scan ns.dot --where "$where" --columns n 2>&1 || true)
  if [ -n "$want" ]; then
    expect "scan --where $where" "$got" "{\"n\":$want}"
    expect "cat --where $where" "$("$floe" cat "$dotfile" --where "$where" --columns n 2>&1 || true)" \
      "{\"n\":$want}"
  else
    # `a``b` is a column named a`b: there is none (a usage error naming it)
    case $got in *'no column '*) ;; *) fail "scan --where $where: $got" ;; esac
  fi
done
for bad in '`a.b = 1' '"a.b = 1' 'a. b = 1' '.a = 1' '`` = 1'; do
  rc=0; "$floe" scan ns.dot --where "$bad" >/dev/null 2>"$tmp/err" || rc=$?
  [ $rc = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || fail "scan --where $bad: exit $rc, $(cat "$tmp/err")"
done
"$floe" rewrite ns.dot --where '`a.b` = 1' --dry-run --json > "$tmp/rw.json" ||
  fail "rewrite --where \`a.b\` = 1: $(cat "$tmp/rw.json")"

[ $fails -eq 0 ] || { echo "scan_escaped_names: $fails failures" >&2; exit 1; }
echo "scan_escaped_names: ok"
