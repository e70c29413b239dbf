#!/usr/bin/env bash
# health_html.sh - `floe health --html FILE` writes the report where FILE says, and only
# there:
#   - a plain file gets the report (the text result names it);
#   - a missing folder fails at once naming it, creating nothing; an empty name is a usage
#     error; a folder is refused;
#   - a symbolic link keeps being a link, the file it names gets the report;
#   - a FIFO (as a device or /dev/stdout would be) is written into, not replaced: the
#     atomic write used to rename a new file over it, which as root replaces a device node.
set -euo pipefail
name=health_html oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
"$floe" table create ns.h --schema s.json >/dev/null
printf '{"k":"a","v":1}\n{"k":"b","v":2}\n' > in.ndjson
"$floe" append ns.h in.ndjson >/dev/null
is_report() { grep -qi '<html' "$1" && grep -q 'ns.h' "$1"; }

"$floe" health ns.h --html plain.html > out.txt || fail "--html plain.html failed"
is_report plain.html || fail "plain.html is not the report"
grep -q "HTML report: plain.html" out.txt || fail "the result does not name the report: $(tail -2 out.txt)"

rc=0; "$floe" health ns.h --html missing/sub/h.html > /dev/null 2> err.txt || rc=$?
[ $rc = 1 ] && grep -q "folder missing/sub does not exist" err.txt || fail "missing folder: exit $rc, $(cat err.txt)"
[ ! -e missing ] || fail "a folder was created"
rc=0; "$floe" health ns.h --html "" > /dev/null 2> err.txt || rc=$?
[ $rc = 2 ] || fail "--html '': exit $rc, $(cat err.txt)"
mkdir adir
rc=0; "$floe" health ns.h --html adir > /dev/null 2> err.txt || rc=$?
[ $rc = 1 ] && grep -q "is a folder" err.txt || fail "--html FOLDER: exit $rc, $(cat err.txt)"
[ -d adir ] || fail "the folder was replaced"

echo old > target.html
ln -s target.html link.html
"$floe" health ns.h --html link.html > /dev/null || fail "--html LINK failed"
[ -L link.html ] || fail "the link was replaced by a file"
is_report target.html || fail "the link's target did not get the report"

mkfifo pipe.html
timeout 60 cat pipe.html > from_pipe.html &
reader=$!
"$floe" health ns.h --html pipe.html > /dev/null || fail "--html FIFO failed"
[ -p pipe.html ] || fail "the FIFO was replaced by a file"
[ -p pipe.html ] || kill $reader 2>/dev/null || true  # its FIFO is gone: nothing will come
wait $reader || fail "nothing was written into the FIFO"
is_report from_pipe.html || fail "what came through the FIFO is not the report"

[ $fails = 0 ] || exit 1
echo "$name: ok"
