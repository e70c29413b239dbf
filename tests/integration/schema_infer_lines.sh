#!/usr/bin/env bash
# schema_infer_lines.sh - floe schema infer's warnings name the file and line where the
# values they speak of first appear (issue 23, adversary r7): the first value of each kind
# that lost a mixed-kinds vote (those the shredder will reject), the first empty key, the
# first line that is not a JSON object, with why; across several files and past blank
# lines. A string value holding \u0000 is valid JSON and inferred; a key holding it is
# skipped with that reason.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "schema_infer_lines: FAIL: $*" >&2; exit 1; }
cd "$tmp"
printf '{"a":1,"b":"x"}\n{"a":"s","b":"y"}\nnot json\n{"a":2,"":3}\n\n{"a":3,"c":[1,"x"]}\n{"s":"x\\u0000y"}\n' > one.ndjson
printf '{"a":4}\n\n[1,2]\n{"d":true}\n{"d":{"x":1}}\n' > two.ndjson
"$floe" schema infer one.ndjson two.ndjson > schema.json 2> err || fail "infer: $(cat err)"
want() { grep -qF -- "$1" err || fail "no \"$1\" in: $(cat err)"; }
want "warning: field 'a' has mixed kinds (number 4, string 1; first string at one.ndjson line 2): inferred from number"
want "warning: object '' has an empty key (first at one.ndjson line 4): left out of the schema"
want "warning: field 'c.element' has mixed kinds (number 1, string 1; first string at one.ndjson line 6)"
want "warning: field 'd' has mixed kinds (boolean 1, object 1; first object at two.ndjson line 5)"
want "2 lines were not JSON objects and were skipped (the first at one.ndjson line 3: '[' or '{' expected near 'not' (column 3))"
python3 -c 'import json,sys; f={x["name"]: x["type"] for x in json.load(open("schema.json"))["fields"]}; sys.exit(f.get("s") != "string")' ||
  fail "a string holding \\u0000 was not inferred: $(cat schema.json)"
printf '{"a":1}\n[1]\n' > arr.ndjson
"$floe" schema infer arr.ndjson > /dev/null 2> err || fail "infer arr: $(cat err)"
want "1 line was not a JSON object and was skipped (the first at arr.ndjson line 2: an array, not an object)"
printf '{"a":1}\n{"k\\u0000":1}\n' > nul.ndjson
"$floe" schema infer nul.ndjson > /dev/null 2> err || fail "infer nul: $(cat err)"
want "1 line was not a JSON object and was skipped (the first at nul.ndjson line 2: NUL byte in object key not supported"
# standard input is named so
printf '{"a":1}\n{"a":"x"}\n' | "$floe" schema infer - > /dev/null 2> err || fail "infer -: $(cat err)"
want "first string at standard input line 2"
echo "schema_infer_lines: ok"
