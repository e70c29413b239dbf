#!/usr/bin/env bash
# rest_vend_boundary.sh - `floe catalog serve --vend` matches a [vend] section's prefix
# against a table's location at a '/' boundary only (adversary finding F3 on issue 21,
# grants): the prefix was compared as a string, so a section written for one table
# (prefix .../shop/ev) also vended its keys for shop.ev2 and shop.events, and a section
# for namespace shop's folder (.../shop) for table shopx.t - to tokens with no grant on
# the table the keys were meant for.
#  - a token granted shop.ev2 only: 403 for shop.ev's credentials, and shop.ev2's answer
#    carries the namespace section's keys, never shop.ev's;
#  - shop.ev gets its own section (the longest prefix); shop.evening gets shop's;
#  - shopx.t gets no keys (empty storage-credentials, config {} on a load);
#  - a prefix ending in '/' covers the table at that folder (shop.events).
set -euo pipefail
name=rest_vend_boundary
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

"$floe" gen --schema-out "$tmp/schema.json" >/dev/null
"$floe" namespace create shop >/dev/null
"$floe" namespace create shopx >/dev/null
for t in shop.ev shop.ev2 shop.evening shop.events shopx.t; do
  "$floe" table create "$t" --schema "$tmp/schema.json" >/dev/null
done
wh=file://$tmp/wh
cat > "$tmp/vend.conf" <<EOF2
[vend ev]
prefix = $wh/shop/ev
s3.access-key-id = AKIAEV
s3.secret-access-key = secret-ev
[vend shop]
prefix = $wh/shop
s3.access-key-id = AKIASHOP
s3.secret-access-key = secret-shop
[vend events]
prefix = $wh/shop/events/
s3.access-key-id = AKIAEVENTS
s3.secret-access-key = secret-events
EOF2
chmod 600 "$tmp/vend.conf"
tokens='[token ops]
secret = secret-ops-0001
grants = *
[token ev2]
secret = secret-ev2-0001
grants = shop.ev2'
serve_checked "$tokens" --vend "$tmp/vend.conf"
OPS=secret-ops-0001 EV2=secret-ev2-0001
# miss MESSAGE: one failed check, counted; the test fails at the end
bad=0
miss() { echo "$name: FAIL: $*" >&2; bad=$((bad + 1)); }

# creds TOKEN NS TABLE: the access key id vended for NS.TABLE ("-" for none)
creds() {
  expect 200 "$1" GET "/v1/namespaces/$2/tables/$3/credentials"
  python3 -c '
import json, sys
sc = json.load(open(sys.argv[1]))["storage-credentials"]
print(sc[0]["config"]["s3.access-key-id"] + " " + sc[0]["prefix"] if sc else "-")' "$tmp/body"
}

expect 403 $EV2 GET /v1/namespaces/shop/tables/ev/credentials
got=$(creds $EV2 shop ev2)
[ "$got" = "AKIASHOP $wh/shop" ] || miss "shop.ev2 (token granted shop.ev2 only) vended: $got, expected shop's keys"
got=$(creds $OPS shop ev)
[ "$got" = "AKIAEV $wh/shop/ev" ] || miss "shop.ev vended: $got, expected its own section's keys"
got=$(creds $OPS shop evening)
[ "$got" = "AKIASHOP $wh/shop" ] || miss "shop.evening vended: $got, expected shop's keys"
got=$(creds $OPS shop events)
[ "$got" = "AKIAEVENTS $wh/shop/events/" ] || miss "shop.events vended: $got, expected the events/ section's keys"
got=$(creds $OPS shopx t)
[ "$got" = - ] || miss "shopx.t vended: $got, expected no keys (no section covers shopx's folder)"

# a load with the delegation header: the same choice in config
load_key() {
  curl -s -H "Authorization: Bearer $1" -H 'X-Iceberg-Access-Delegation: vended-credentials' \
    "$base/v1/namespaces/$2/tables/$3" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["config"].get("s3.access-key-id", "-"))'
}
[ "$(load_key $EV2 shop ev2)" = AKIASHOP ] || miss "load of shop.ev2: config has $(load_key $EV2 shop ev2)"
[ "$(load_key $OPS shopx t)" = - ] || miss "load of shopx.t: config has $(load_key $OPS shopx t)"
server_alive
openapi_check
[ "$bad" = 0 ] || fail "$bad checks failed"
echo "$name: ok"
