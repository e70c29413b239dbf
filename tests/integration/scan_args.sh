#!/usr/bin/env bash
# scan_args.sh - issue 24, adversary finding adv24d 7: floe scan's options say what they
# do or are refused (exit 2, one line naming the option; under --json the USAGE document):
#   - --json is for --plan (one JSON document); rows print as NDJSON or as --format says,
#     so --json without --plan is refused instead of being parsed and ignored;
#   - --ref, --snapshot, --as-of and --columns given twice are refused (the last silently
#     won), as --where given twice is, and so are floe ref create/replace --snapshot and
#     the retention options given twice;
#   - --columns: an empty name ("" or "a,,b") is refused (it meant every column), a name
#     given twice is refused (a row held the key twice), a name the schema lacks is a usage
#     error naming it (exit 2, as an unknown --where column is), not a failure (exit 1).
set -euo pipefail
name=scan_args oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

jq1() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
"$floe" table create ns.t --schema s.json >/dev/null
printf '{"k":"a","v":1}\n{"k":"b","v":2}\n' > a.ndjson
A=$("$floe" append ns.t a.ndjson --json | jq1 'd["snapshot_id"]')
sleep 0.05
T1=$("$floe" snapshots ns.t --json | jq1 'd[0]["timestamp_ms"]')
"$floe" append ns.t a.ndjson >/dev/null
B=$("$floe" snapshots ns.t --json | jq1 'max(d, key=lambda s: s["timestamp_ms"])["snapshot_id"]')
"$floe" ref create ns.t br --snapshot "$A" >/dev/null
"$floe" ref create ns.t tg --tag >/dev/null

# -- --json is the plan's --------------------------------------------------------------------
usage_refused "scan --json" "--json is for --plan" scan ns.t --json --limit 2
usage_refused "scan --json --limit 0" "--json is for --plan" scan ns.t --json --limit 0
usage_refused "scan --json --format csv" "--json is for --plan" scan ns.t --json --format csv
"$floe" scan ns.t --plan --json > out.txt || fail "scan --plan --json: exit $?"
[ "$(jq1 'd["records"]' < out.txt)" = 4 ] || fail "scan --plan --json: $(cat out.txt)"
[ "$("$floe" scan ns.t | wc -l)" = 4 ] || fail "scan: $("$floe" scan ns.t)"

# -- a selection given twice -----------------------------------------------------------------
usage_refused "--ref twice" "--ref given twice" scan ns.t --ref br --ref tg
usage_refused "--snapshot twice" "--snapshot given twice" scan ns.t --snapshot "$A" --snapshot "$B"
usage_refused "--as-of twice" "--as-of given twice" scan ns.t --as-of "$T1" --as-of "$((T1 + 1))"
usage_refused "--columns twice" "--columns given twice" scan ns.t --columns k --columns v
usage_refused "--ref and --snapshot" "exclude each other" scan ns.t --ref br --snapshot "$A"
usage_refused "--ref twice --json" "--ref given twice" scan ns.t --ref br --ref tg --plan --json
[ "$("$floe" scan ns.t --ref br | wc -l)" = 2 ] || fail "scan --ref br"
[ "$("$floe" scan ns.t --snapshot "$B" | wc -l)" = 4 ] || fail "scan --snapshot B"
usage_refused "ref create --snapshot twice" "--snapshot given twice" ref create ns.t x --snapshot "$A" --snapshot "$B"
usage_refused "ref replace --snapshot twice" "--snapshot given twice" ref replace ns.t br --snapshot "$A" --snapshot "$B"
usage_refused "ref create retention twice" "--max-ref-age-ms given twice" ref create ns.t y --tag --max-ref-age-ms 1d --max-ref-age-ms 2d
usage_refused "ref replace retention twice" "--min-snapshots-to-keep given twice" ref replace ns.t br --min-snapshots-to-keep 1 --min-snapshots-to-keep 2
"$floe" ref list ns.t --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert sorted(r["name"] for r in d) == ["br","main","tg"], d' ||
  fail "refs after the refusals: $("$floe" ref list ns.t)"
[ "$("$floe" ref list ns.t --json | jq1 '[r for r in d if r["name"]=="br"][0]["snapshot_id"]')" = "$A" ] ||
  fail "br moved: $("$floe" ref list ns.t)"

# -- --columns ---------------------------------------------------------------------------------
usage_refused "--columns ''" "an empty column name" scan ns.t --columns ""
usage_refused "--columns ," "an empty column name" scan ns.t --columns ,
usage_refused "--columns k,,v" "an empty column name" scan ns.t --columns k,,v
usage_refused "--columns k," "an empty column name" scan ns.t --columns k,
usage_refused "--columns k,k" "a column named twice: k" scan ns.t --columns k,k
usage_refused "--columns k, k" "a column named twice: k" scan ns.t --columns "k, k"
usage_refused "--columns nope" "no column nope" scan ns.t --columns nope
usage_refused "--columns k,nope --json" "no column nope" scan ns.t --columns k,nope --plan --json
usage_refused "--columns nope --ref br" "no column nope" scan ns.t --columns nope --ref br
[ "$("$floe" scan ns.t --columns v,k --limit 1)" = '{"v":1,"k":"a"}' ] || fail "--columns v,k: $("$floe" scan ns.t --columns v,k --limit 1)"
[ "$("$floe" scan ns.t --columns " v" --limit 1)" = '{"v":1}' ] || fail "--columns ' v'"

[ $fails = 0 ] || exit 1
echo "$name: ok"
