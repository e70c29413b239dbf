#!/usr/bin/env bash
# rest_case_fold.sh - names that differ only by case or Unicode normalization get no
# folders a case-insensitive filesystem takes for one (issue 21, adversary F7): on macOS
# or Windows tables shop.Orders and shop.orders shared one folder, so each one's orphan
# removal or purge deleted the other's files. Checked on Linux by the derived locations:
#  1. table shop.Orders, then shop.orders and shop.ORDERS: 409 AlreadyExistsException
#     naming the case, nothing written; shop.orders2 is taken;
#  2. a create whose location differs from another table's only by case: 409;
#  3. namespace Sales, then sales (through the server): 409; sales2 taken;
#  4. with ICU (floe is built with it: it names libicuuc's soname, which it loads on the
#     first fold): table shop."café" in NFC, then in NFD (e and
#     U+0301, the form HFS+ stores): 409; alpha + U+0345 + U+0301, then alpha + U+0301 +
#     U+0345 (canonically equal: one NFC form, U+1FB4) as tables and namespaces: 409
#     (adversary adv21h H1: folding case before normalizing turned U+0345 into a letter
#     and let the second one through);
#  5. every table's location is distinct from every other's case-insensitively (Python's
#     canonical caseless form: NFC of the casefold of the NFD form).
set -euo pipefail
name=rest_case_fold
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

open_shop
err_type() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["type"])' "$tmp/body" 2>/dev/null || true; }
create() { req $T POST /v1/namespaces/shop/tables "{\"name\":\"$1\",\"schema\":$id_schema${2:+,\"location\":\"$2\"}}"; }
refused() { # WHAT: the last answer is a 409 AlreadyExistsException about case
  grep -q 'differs only by case' "$tmp/body" && [ "$(err_type)" = AlreadyExistsException ] ||
    soft "$1: not a 409 AlreadyExistsException about case: $(head -c 300 "$tmp/body")"
}

# 1. tables
[ "$(create Orders)" = 200 ] || fail "create Orders: $(head -c 300 "$tmp/body")"
for t in orders ORDERS; do
  got=$(create $t)
  [ "$got" = 409 ] || soft "create $t beside Orders: $got, want 409"
  refused "create $t"
  [ "$(req $T GET /v1/namespaces/shop/tables/$t)" = 404 ] || soft "table $t exists after a refused create"
done
[ ! -e "$FLOE_WAREHOUSE/shop/orders" ] && [ ! -e "$FLOE_WAREHOUSE/shop/ORDERS" ] || soft "a folder was made for a refused create"
[ "$(create orders2)" = 200 ] || soft "create orders2: $(head -c 300 "$tmp/body")"

# 2. a location differing only by case
got=$(create placed "$FLOE_WAREHOUSE/shop/ORDERS2")
[ "$got" = 409 ] || soft "create at .../ORDERS2: $got, want 409"
refused "create at .../ORDERS2"

# 3. namespaces
[ "$(req $T POST /v1/namespaces '{"namespace":["Sales"]}')" = 200 ] || soft "create Sales: $(head -c 300 "$tmp/body")"
got=$(req $T POST /v1/namespaces '{"namespace":["sales"]}')
[ "$got" = 409 ] || soft "create namespace sales beside Sales: $got, want 409: $(head -c 300 "$tmp/body")"
grep -q 'differs only by case' "$tmp/body" || soft "namespace sales: the message does not say why: $(head -c 300 "$tmp/body")"
[ "$(req $T GET /v1/namespaces/sales)" = 404 ] || soft "namespace sales exists after a refused create"
[ "$(req $T POST /v1/namespaces '{"namespace":["sales2"]}')" = 200 ] || soft "create sales2: $(head -c 300 "$tmp/body")"

# 4. Unicode normalization (with ICU)
if grep -aq 'libicuuc\.so\.[0-9]' "$floe"; then
  [ "$(create 'caf\u00e9')" = 200 ] || soft "create café (NFC): $(head -c 300 "$tmp/body")"
  got=$(create 'cafe\u0301')
  [ "$got" = 409 ] || soft "create café (NFD) beside its NFC form: $got, want 409"
  refused "create café (NFD)"
  [ "$(create 'CAF\u00c9')" = 409 ] || soft "create CAFÉ beside café: want 409"
  [ "$(create '\u03b1\u0345\u0301')" = 200 ] || soft "create alpha-ypogegrammeni-acute: $(head -c 300 "$tmp/body")"
  got=$(create '\u03b1\u0301\u0345')
  [ "$got" = 409 ] || soft "create alpha-acute-ypogegrammeni (same NFC as the table before): $got, want 409"
  [ "$(req $T POST /v1/namespaces '{"namespace":["n\u03b1\u0345\u0301"]}')" = 200 ] ||
    soft "create namespace n-alpha-ypogegrammeni-acute: $(head -c 300 "$tmp/body")"
  got=$(req $T POST /v1/namespaces '{"namespace":["n\u03b1\u0301\u0345"]}')
  [ "$got" = 409 ] || soft "create namespace n-alpha-acute-ypogegrammeni (same NFC): $got, want 409"
else
  echo "$name: floe is built without ICU: the Unicode part is skipped"
fi

# 5. the locations are apart case-insensitively
python3 - "$base" <<'PY' || soft "two tables' locations are one folder case-insensitively"
import json, sys, unicodedata, urllib.parse, urllib.request
base = sys.argv[1]
get = lambda p: json.load(urllib.request.urlopen(urllib.request.Request(base + p, headers={"Authorization": "Bearer open"})))
names = [i["name"] for i in get("/v1/namespaces/shop/tables")["identifiers"]]
locs = [get("/v1/namespaces/shop/tables/" + urllib.parse.quote(n, safe=""))["metadata"]["location"] for n in names]
keys = [unicodedata.normalize("NFC", unicodedata.normalize("NFD", l).casefold()) for l in locs]
print("\n".join(locs), file=sys.stderr) if len(set(keys)) != len(keys) else None
assert len(locs) >= 2 and len(set(keys)) == len(keys), locs
PY

server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
