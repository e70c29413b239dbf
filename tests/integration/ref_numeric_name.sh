#!/usr/bin/env bash
# ref_numeric_name.sh - issue 24, adversary finding adv24d 9: a ref name that reads as a
# snapshot id (all digits, or a 64-bit integer) is refused by floe ref create (exit 2,
# saying why): `floe snapshots set-current TABLE WORD` takes WORD as a snapshot id first,
# `floe scan --ref WORD` as a ref, so a tag named like a snapshot id made the same word
# mean two snapshots. The Iceberg spec puts no rule on ref names: a table whose metadata
# (written by another engine) holds such a ref still loads, lists it, scans it, and it
# can still be replaced and dropped.
set -euo pipefail
name=ref_numeric_name oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
command -v sqlite3 >/dev/null || { echo "$name: SKIP: sqlite3 missing"; exit 77; }

jq1() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
"$floe" table create ns.t --schema s.json >/dev/null
printf '{"k":"a","v":1}\n' > a.ndjson
S1=$("$floe" append ns.t a.ndjson --json | jq1 'd["snapshot_id"]')
S2=$("$floe" append ns.t a.ndjson --json | jq1 'd["snapshot_id"]')

usage_refused "create 42" "reads as a snapshot id" ref create ns.t 42 --tag
usage_refused "create S2 at S1" "reads as a snapshot id" ref create ns.t "$S2" --tag --snapshot "$S1"
usage_refused "create 0007 --json" "reads as a snapshot id" ref create ns.t 0007 --json
usage_refused "create 99999999999999999999" "reads as a snapshot id" ref create ns.t 99999999999999999999
[ "$("$floe" ref list ns.t --json | jq1 'sorted(r["name"] for r in d)')" = "['main']" ] ||
  fail "refs after the refusals: $("$floe" ref list ns.t)"
# names with digits and more are names
for ok in v42 42a 1.5 2026-12-05; do
  "$floe" ref create ns.t "$ok" --tag >/dev/null || fail "ref create $ok"
done
"$floe" snapshots set-current ns.t "$S1" >/dev/null || fail "set-current S1"
[ "$("$floe" scan ns.t | wc -l)" = 1 ] || fail "set-current S1: $("$floe" scan ns.t | wc -l) rows"
"$floe" snapshots set-current ns.t "$S2" >/dev/null || fail "set-current S2"

# another engine's ref named 42 (at S1): the table loads, the ref lists, scans, is
# replaced and dropped
cur=$(meta ns.t)
new=${cur%/*}/99999-numeric-ref.metadata.json
python3 - "$cur" "$new" "$S1" <<'PY'
import json, sys
cur, new, s1 = sys.argv[1:]
m = json.load(open(cur))
m["refs"]["42"] = {"snapshot-id": int(s1), "type": "tag"}
m["metadata-log"].append({"timestamp-ms": m["last-updated-ms"], "metadata-file": "file://" + cur})
json.dump(m, open(new, "w"))
PY
sqlite3 "$catalog_db" "UPDATE iceberg_tables SET metadata_location = 'file://$new',
  previous_metadata_location = metadata_location WHERE table_name = 't'"
[ "$("$floe" ref list ns.t --json | jq1 '[r["snapshot_id"] for r in d if r["name"]=="42"]')" = "[$S1]" ] ||
  fail "ref list with another engine's ref 42: $("$floe" ref list ns.t)"
[ "$("$floe" scan ns.t --ref 42 | wc -l)" = 1 ] || fail "scan --ref 42"
[ "$("$floe" scan ns.t | wc -l)" = 2 ] || fail "scan"
"$floe" table describe ns.t >/dev/null || fail "table describe"
"$floe" ref replace ns.t 42 --snapshot "$S2" >/dev/null || fail "ref replace 42"
[ "$("$floe" scan ns.t --ref 42 | wc -l)" = 2 ] || fail "scan --ref 42 after replace"
"$floe" ref drop ns.t 42 >/dev/null || fail "ref drop 42"
[ "$("$floe" ref list ns.t --json | jq1 '[r for r in d if r["name"]=="42"]')" = "[]" ] || fail "42 after drop"

[ $fails = 0 ] || exit 1
echo "$name: ok"
