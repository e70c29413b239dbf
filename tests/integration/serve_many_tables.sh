#!/usr/bin/env bash
# floe serve with auto_create: a client that posts to many new tables cannot make the
# server keep request scratch per table without bound. Each table keeps idle scratch
# (the shredder, buffers) for reuse; all tables' idle scratch together is held in the
# in-flight budget and capped at a quarter of it (max_inflight_bytes 64 MiB here: 16
# MiB), reported as floe_scratch_pooled_bytes and included in floe_inflight_bytes.
# 48 tables, a 1 MB post each: resident growth must stay under that share, what the
# records buffered take (floe_buffered_bytes) and a margin. (Before: about 4 MB of idle
# scratch per table, 251 MB for 60 tables in a release build, outside every metric.)
set -euo pipefail
source "$(dirname "$0")/serve/lib.sh"

"$FLOE" gen --count 2000 --seed 7 -o "$tmp/ev.ndjson" >/dev/null
cat > "$tmp/serve.conf" <<CONF
[server]
listen = 127.0.0.1:0
warehouse = $tmp/wh
auto_create = true
maintain = false
max_inflight_bytes = 64MiB
[defaults]
schema_mode = evolve
CONF
# the sanitizer's quarantine would keep freed blocks resident: off for the server
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
rss_mib() { awk '/^VmRSS:/ {printf "%d", $2 / 1024}' "/proc/$pid/status"; }
post() {
  curl -s -o /dev/null -w '%{http_code}\n' -XPOST -H 'Content-Type: application/x-ndjson' \
    --data-binary "@$tmp/ev.ndjson" "http://127.0.0.1:$port/v1/tables/many.t$1/events"
}
export -f post
export tmp

start_server --config "$tmp/serve.conf"
export port
post 0 > "$tmp/codes"
base=$(rss_mib)
seq 1 48 | xargs -P4 -I{} bash -c 'post {}' >> "$tmp/codes"
codes=$(sort "$tmp/codes" | uniq -c | tr '\n' ' ')
[ "$(grep -c '^200$' "$tmp/codes")" = 49 ] || fail "posts to 49 new tables: $codes"
pooled=$(metric floe_scratch_pooled_bytes)
held=$(metric floe_inflight_bytes)
buffered=$(metric floe_buffered_bytes)
[ -n "$pooled" ] || fail "/metrics has no floe_scratch_pooled_bytes"
[ "$pooled" -gt 0 ] || fail "floe_scratch_pooled_bytes is 0: no scratch kept for reuse"
[ "$pooled" -le $((16 << 20)) ] || fail "floe_scratch_pooled_bytes $pooled over 16 MiB (a quarter of the budget)"
[ "$held" -ge "$pooled" ] || fail "floe_inflight_bytes $held does not count the idle scratch ($pooled)"
rss=$(rss_mib)
bound=$((base + 16 + buffered / 1048576 * 2 + 48))
echo "serve_many_tables: 49 tables: RSS $rss MiB (idle after one post $base), pooled $pooled, in flight $held, buffered $buffered; bound $bound"
[ "$rss" -le "$bound" ] || fail "RSS $rss MiB after posts to 49 tables (bound $bound MiB)"
# idle scratch gives way: a request that needs the budget still gets it
[ "$(post 1)" = 200 ] || fail "a post once the pool is full"
# flush's yes/no arguments take yes or no, nothing else
for q in 'compact=2&wait=yes' 'compact=1&wait=maybe'; do
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -XPOST "http://127.0.0.1:$port/v1/admin/flush?$q")
  [ "$code" = 400 ] || fail "flush?$q: HTTP $code, want 400"
  grep -q "${q%%=*}: want 1, true or yes" "$tmp/out" || grep -q "wait: want 1" "$tmp/out" ||
    fail "flush?$q: the 400 does not name the argument: $(cat "$tmp/out")"
done
grep -q 'compact: want' <(curl -s -XPOST "http://127.0.0.1:$port/v1/admin/flush?compact=2") ||
  fail "flush?compact=2 does not name compact"
stop_server
# a table floe serve creates gets floe's defaults for tables it creates (metadata files
# cleaned after commit, manifests merged at commit time), as `floe table create` does
props=$(FLOE_CATALOG_URI="$tmp/wh/catalog.db" FLOE_WAREHOUSE="$tmp/wh" FLOE_CATALOG=default \
  "$FLOE" table properties many.t7) || fail "floe table properties many.t7"
for kv in write.metadata.delete-after-commit.enabled=true write.metadata.previous-versions-max=10 \
          commit.manifest.min-count-to-merge=8; do
  grep -Eq "^ *${kv%%=*}[ =:]+${kv#*=}\$" <<< "$props" ||
    fail "auto-created table lacks $kv: $props"
done
echo "serve_many_tables: ok"
