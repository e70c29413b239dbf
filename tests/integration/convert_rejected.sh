#!/usr/bin/env bash
# convert_rejected.sh - `floe convert` follows floe append's rule (adversary finding adv24b
# 15): every record rejected: no file written, exit 1, the message (and the JSON error under
# --json, alone on standard output) names the quarantine, which holds the records; some
# rejected: exit 0 with the rest converted; input without records: exit 0; --help says so.
set -euo pipefail
name=convert_rejected oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"

"$floe" convert --help | tr -s '\n ' '  ' |
  grep -q 'When every record is rejected no file is written and convert fails (exit 1)' ||
  fail "--help does not say what happens when every record is rejected"

printf '{"k":1,"v":"x"}\n{"k":"b","v":"y"}\n{"zz":1}\n' > bad.ndjson
rc=0; "$floe" convert bad.ndjson --schema s.json -o out1 > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] || fail "all rejected: exit $rc"
grep -q "all 3 records were rejected; no file was written (the records and the reasons are in the quarantine out1/_quarantine/quarantine.ndjson)" err.txt ||
  fail "all rejected: $(cat err.txt)"
[ "$(wc -l < out1/_quarantine/quarantine.ndjson)" = 3 ] || fail "quarantine: $(cat out1/_quarantine/quarantine.ndjson)"
[ -z "$(find out1 -name '*.parquet')" ] || fail "files written: $(find out1 -name '*.parquet')"

rc=0; "$floe" convert bad.ndjson --schema s.json -o out2 --json > out.txt 2> err.txt || rc=$?
[ $rc = 1 ] || fail "all rejected --json: exit $rc"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))   # one document: the error alone
e = d["error"]
assert e["exit"] == 1 and "quarantine" in e["message"], d' out.txt || fail "--json: $(cat out.txt)"

printf '{"k":"a","v":1}\n{"zz":1}\n' > some.ndjson
"$floe" convert some.ndjson --schema s.json -o out3 > out.txt 2> err.txt ||
  fail "some rejected: exit $?, $(cat err.txt)"
grep -q "1 rows written, 1 rejected" out.txt || fail "some rejected: $(cat out.txt)"

: > empty.ndjson
"$floe" convert empty.ndjson --schema s.json -o out4 > out.txt 2> err.txt ||
  fail "no records: exit $?, $(cat err.txt)"

[ $fails = 0 ] || exit 1
echo "$name: ok"
