#!/usr/bin/env bash
# rest_tokens_file.sh - `floe catalog serve --tokens FILE` refuses, before it listens, a
# tokens file it would misread (adversary finding on issue 21): exit 2 with FILE:LINE and
# the reason for a malformed line, an empty secret, a token without one, the same token
# (name or secret) twice, an unknown grant, a grant on a malformed namespace or table
# name; FILE and the mode for a file group or others may read (as ssh does, with the
# chmod that fixes it); FILE for a file without tokens. A good file still serves.
name=rest_tokens_file
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: SKIP: curl missing"; exit 77; }
command -v timeout >/dev/null || { echo "$name: SKIP: timeout missing"; exit 77; }
fails=0
fail() { echo "$name: FAIL: $*" >&2; fails=$((fails + 1)); }
"$floe" namespace create shop >/dev/null
f=$tmp/tokens.ini

# TEXT WANT...: a file holding TEXT (mode 600) is refused with exit 2 and every WANT in
# the message
refused() {
  local text=$1
  shift
  printf '%b' "$text" > "$f"
  chmod 600 "$f"
  refused_file "$@"
}
refused_file() {
  local code=0
  timeout 5 "$floe" catalog serve --listen 127.0.0.1:0 --tokens "$f" >/dev/null 2>"$tmp/err" ||
    code=$?
  if [ "$code" != 2 ]; then
    fail "exit $code, want 2 ($*): $(cat "$tmp/err")"
    return
  fi
  for want in "$@"; do
    grep -qF -- "$want" "$tmp/err" || fail "message lacks '$want': $(cat "$tmp/err")"
  done
}

ok='[token a]\nsecret = secret-aaaaaaaa\ngrants = shop.*\n'
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants shop.*\n" "$f:6:" "key = value"
refused "$ok[token b\nsecret = secret-bbbbbbbb\n" "$f:4:" "section header"
refused "$ok[token b]\nsecret =\ngrants = *\n" "$f:5:" "secret"
refused "$ok[token b]\nsecret =   \ngrants = *\n" "$f:5:" "secret"
refused "$ok[token b]\ngrants = *\n" "$f:4:" "[token b] has no secret"
refused "$ok[token a]\nsecret = secret-bbbbbbbb\n" "$f:4:" "[token a]" "line 1"
refused "$ok[token b]\nsecret = secret-aaaaaaaa\n" "$f:5:" "[token a]" "line 2"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = shop.*, superuser\n" \
  "$f:6:" "unknown grant 'superuser'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = shop.*, Admin\n" "$f:6:" "'Admin'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = shop..events\n" "$f:6:" "'shop..events'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = .events\n" "$f:6:" "'.events'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = shop.\n" "$f:6:" "'shop.'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = shop.*.events\n" "$f:6:" "'shop.*.events'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = *.events\n" "$f:6:" "'*.events'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = shop.ev*\n" "$f:6:" "'shop.ev*'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = sh/op.events\n" "$f:6:" "'sh/op.events'"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = shop.\xff\n" "$f:6:" "UTF-8"
refused "$ok[token b]\nsecret = secret-bbbbbbbb\ngrants = ,\n" "$f:6:" "no grant"
# readable by others: the mode and the fix; an empty file, one without tokens
printf '%b' "$ok" > "$f"
for mode in 644 640 604 660; do
  chmod "$mode" "$f"
  refused_file "$f:" "mode 0$mode" "chmod 600 $f"
done
: > "$f"; chmod 600 "$f"
refused_file "$f:" "empty"
printf '# nothing yet\n\n' > "$f"
refused_file "$f:" "no [token NAME] section"
# a good file serves, and its grants hold
printf '[token a]\nsecret = secret-aaaaaaaa\ngrants = shop.*, x.y.events, admin, metrics\n' > "$f"
chmod 600 "$f"
start_server --tokens "$f"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer secret-aaaaaaaa' \
  "http://127.0.0.1:$port/v1/namespaces/shop")
[ "$code" = 200 ] || fail "a good tokens file: GET namespace: $code"
server_alive
[ "$fails" = 0 ] || exit 1
echo "$name: ok"
