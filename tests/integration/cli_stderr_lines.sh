#!/usr/bin/env bash
# cli_stderr_lines.sh - every line floe writes on standard error goes out in one write(2),
# so lines of concurrent processes and threads (floe serve's log, two commands sharing a
# terminal or a log file) never interleave inside a line. Standard error is unbuffered in
# C: an error naming an escaped name went out a byte at a time. Checked with strace on
# an error (a table name holding an escaped control byte), a usage error and an error
# under --json.
name=cli_stderr_lines oracle=
source "$(dirname "$0")/lib/table_cli_common.sh"
command -v strace >/dev/null || { echo "$name: SKIP: no strace (scripts/setup --test)"; exit 77; }
cd "$tmp"

# writes CMD...: the writes the command made to fd 2, one per line, as strace shows them
writes() {
  # (LeakSanitizer cannot work under ptrace)
  ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 strace -f -qq -e trace=write -e signal=none -o trace.txt \
    "$floe" "$@" >/dev/null 2>err.txt || true
  grep -E '^([0-9]+ +)?write\(2,' trace.txt > writes.txt || true
}
# one_write WHAT CMD...: stderr is exactly one line, written by one write
one_write() {
  local what=$1; shift
  writes "$@"
  [ "$(wc -l < err.txt)" = 1 ] || fail "$what: stderr is not one line: $(cat err.txt)"
  [ "$(wc -l < writes.txt)" = 1 ] || fail "$what: $(wc -l < writes.txt) writes for one line: $(head -5 writes.txt)"
}
one_write "an error naming a missing table" scan "ns.nope$(printf '\001')x"
grep -q 'nope\\x01x' err.txt || fail "the control byte is not escaped: $(cat err.txt)"
one_write "a usage error" scan ns.t --columns
one_write "a --json error" scan ns.nope --plan --json
[ "$fails" -eq 0 ] || exit 1
echo "$name: ok"
