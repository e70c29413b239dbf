#!/usr/bin/env bash
# ref_age_exact.sh - floe ref's retention ages (--max-ref-age-ms, --max-snapshot-age-ms)
# are counted exactly, as the milliseconds Iceberg keeps (adversary finding 2 on issue 24):
#  - whole milliseconds are stored as typed, also above 2^53 (a double rounded them) and up
#    to 9223372036854775807 (Iceberg's "never", refused before);
#  - a whole number of a unit (7d, 12h, 90m, 30s, 250ms) is multiplied exactly;
#  - a sign, a blank, a fraction, an exponent, a hex number, an overflow, zero are usage
#    errors (exit 2), nothing committed.
name=ref_age_exact oracle=
source "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
"$floe" table create ns.t --schema s.json >/dev/null
printf '{"k":"a","v":1}\n' > in.ndjson
"$floe" append ns.t in.ndjson >/dev/null

# ref_field REF KEY: the value of KEY in REF of the current metadata
ref_field() { mq ns.t "m['refs']['$1'].get('$2')"; }

n=0
for spec in 9007199254740993:9007199254740993 9223372036854775807:9223372036854775807 \
            7d:604800000 12h:43200000 90m:5400000 30s:30000 250ms:250 1:1; do
  n=$((n + 1))
  in=${spec%%:*} want=${spec#*:}
  "$floe" ref create ns.t "b$n" --max-ref-age-ms "$in" --max-snapshot-age-ms "$in" >/dev/null ||
    fail "ref create with age $in refused"
  [ "$(ref_field "b$n" max-ref-age-ms)" = "$want" ] ||
    fail "--max-ref-age-ms $in stored as $(ref_field "b$n" max-ref-age-ms), want $want"
  [ "$(ref_field "b$n" max-snapshot-age-ms)" = "$want" ] ||
    fail "--max-snapshot-age-ms $in stored as $(ref_field "b$n" max-snapshot-age-ms), want $want"
done
before=$(meta ns.t)
for bad in 0x10 1e3 ' 5' '5 ' +5 -5 1.5d 0 0d 9223372036854775808 9223372036854775807d '7 d' 7days d ''; do
  usage_refused "--max-ref-age-ms '$bad'" "--max-ref-age-ms" ref create ns.t x --max-ref-age-ms "$bad"
  usage_refused "--max-snapshot-age-ms '$bad'" "--max-snapshot-age-ms" \
    ref create ns.t x --max-snapshot-age-ms "$bad"
done
[ "$(meta ns.t)" = "$before" ] || fail "a refused age committed"
# replace takes the same rule
"$floe" ref replace ns.t b1 --max-ref-age-ms 9223372036854775806 >/dev/null || fail "replace"
[ "$(ref_field b1 max-ref-age-ms)" = 9223372036854775806 ] || fail "replace stored $(ref_field b1 max-ref-age-ms)"
usage_refused "replace 1e3" "--max-ref-age-ms" ref replace ns.t b1 --max-ref-age-ms 1e3

[ "$fails" -eq 0 ] || exit 1
echo "$name: ok"
