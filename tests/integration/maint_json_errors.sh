#!/usr/bin/env bash
# maint_json_errors.sh - `floe expire --json` and `floe orphans --json` stay one JSON
# document when the error comes after their result object has begun (adversary finding on
# issue 24): the error is the object's last member, {"table", "dry_run", ...,
# "error": {"code", "exit", "message"}}, exit 1, and the message is on standard error too.
# The error: the current snapshot's manifest list is gone, so neither command can tell
# which files are live (both must fail, not delete). Every output is parsed whole by
# python3's json module (a second document after the first fails the parse); errors
# before the object begins (no such table) are the usual {"error": ...} document.
set -euo pipefail
name=maint_json_errors oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
echo '{"k":"a","v":1}' > "$tmp/a.ndjson"

broken() { # TABLE: three snapshots, their manifest lists removed
  "$floe" table create "$1" --schema "$tmp/s.json" >/dev/null
  for _ in 1 2 3; do "$floe" append "$1" "$tmp/a.ndjson" >/dev/null; done
  rm "$tmp"/wh/ns/"${1#ns.}"/metadata/snap-*.avro
}

# one JSON document; prints "code exit last-key keys-before-error" of its error
check() { # WHAT FILE
  python3 - "$2" 2>/dev/null <<'PY' || { fail "$1: not one JSON document: $(cat "$2")"; echo; }
import json, sys
d = json.load(open(sys.argv[1]))
keys = list(d)
print(d["error"]["code"], d["error"]["exit"], keys[-1], "message" in d["error"], keys[0])
PY
}

n=0
for args in "expire --older-than 0s" "expire --older-than 0s --list" "expire --older-than 0s --dry-run" \
            "orphans --older-than 0s --dry-run" "orphans --older-than 0s --dry-run --list" \
            "orphans --older-than 0s --force"; do
  n=$((n + 1))
  broken "ns.t$n"
  set +e
  # shellcheck disable=SC2086
  "$floe" ${args%% *} "ns.t$n" ${args#* } --json >"$tmp/out$n.json" 2>"$tmp/err$n"; rc=$?
  set -e
  [ $rc = 1 ] || fail "$args --json: exit $rc"
  grep -q "^floe: .*snap-.*No such file" "$tmp/err$n" || fail "$args --json: standard error: $(cat "$tmp/err$n")"
  got=$(check "$args" "$tmp/out$n.json")
  [ "$got" = "NOTFOUND 1 error True table" ] || fail "$args --json: $got from $(cat "$tmp/out$n.json")"
  [ -n "$(ls "$tmp"/wh/ns/t$n/data/)" ] || fail "$args: data files deleted"
done

# an error before the object: the error document alone
set +e
"$floe" expire ns.nosuch --older-than 0s --json >"$tmp/nt.json" 2>/dev/null; rc1=$?
"$floe" orphans ns.nosuch --older-than 0s --dry-run --json >"$tmp/no.json" 2>/dev/null; rc2=$?
set -e
for f in nt no; do
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert list(d) == ["error"], d' "$tmp/$f.json" ||
    fail "$f: $(cat "$tmp/$f.json")"
done
[ $rc1 = 1 ] && [ $rc2 = 1 ] || fail "missing table: exit $rc1, $rc2"

[ $fails = 0 ] || exit 1
echo "maint_json_errors: ok"
