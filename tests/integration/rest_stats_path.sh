#!/usr/bin/env bash
# rest_stats_path.sh - `floe catalog serve` refuses a statistics file that is a file the
# table holds in another role (adversary finding N1 on issue 21, data loss): the server
# took a set-statistics naming the current manifest list (or a metadata file), and the
# expiry of the snapshot the statistics belonged to deleted it.
#  1. set-statistics / set-partition-statistics whose statistics-path is a snapshot's
#     manifest list (the current one, another spelling of it, the statistics' own
#     snapshot's, one added by the same request), a metadata-log file or the current
#     metadata file: 400 BadRequestException naming the path, nothing committed; also
#     through transactions/commit;
#  2. a statistics file of its own is taken (200);
#  3. what the server does not look for (a live data file, a live manifest: that takes
#     reading the manifests) is taken, and floe expire through the server keeps it: the
#     table still scans every row.
set -euo pipefail
name=rest_stats_path
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

shop_table st 3
serve_table st
q() { loaded "$tmp/st.json" "$1"; }
read -r s1 s2 s3 <<<"$(in_order "$tmp/st.json" snapshot-id)"
read -r l1 l2 l3 <<<"$(in_order "$tmp/st.json" manifest-list)"
logfile=$(q "m['metadata-log'][0]['metadata-file']")
current=$(q "d['metadata-location']")
loc=$(q "m['location']")
dir=$tmp/wh/shop/st

# stats SNAPSHOT PATH [partition]: the update
stats() {
  if [ "${3:-}" = partition ]; then
    printf '{"action":"set-partition-statistics","partition-statistics":{"snapshot-id":%s,"statistics-path":"%s","file-size-in-bytes":10}}' "$1" "$2"
  else
    printf '{"action":"set-statistics","statistics":{"snapshot-id":%s,"statistics-path":"%s","file-size-in-bytes":10,"file-footer-size-in-bytes":4,"blob-metadata":[]}}' "$1" "$2"
  fi
}
commit() { printf '{"requirements":[],"updates":[%s]}' "$1"; }

# 1. refused
expect_soft "statistics = the current manifest list" 400 "$l3" POST $tbl "$(commit "$(stats $s1 "$l3")")"
grep -q BadRequestException "$tmp/body" || soft "not a BadRequestException: $(head -c 300 "$tmp/body")"
expect_soft "statistics = its own snapshot's manifest list" 400 "is the manifest list of snapshot $s1" \
  POST $tbl "$(commit "$(stats $s1 "$l1")")"
expect_soft "partition statistics = a manifest list" 400 "$l2" POST $tbl "$(commit "$(stats $s1 "$l2" partition)")"
l3_short=file:/${l3#file:///}
expect_soft "statistics = the current manifest list spelt file:/" 400 "$l3_short" POST $tbl \
  "$(commit "$(stats $s1 "$l3_short")")"
expect_soft "statistics = a metadata-log file" 400 "$logfile" POST $tbl "$(commit "$(stats $s2 "$logfile")")"
expect_soft "statistics = the current metadata file" 400 "$current" POST $tbl "$(commit "$(stats $s2 "$current")")"
# a snapshot added by the same request, its list as the statistics file
cp "${l3#file://}" "$dir/metadata/snap-added.avro"
added=$(q "json.dumps({'snapshot-id': 424242, 'parent-snapshot-id': m['current-snapshot-id'], 'sequence-number': m['last-sequence-number'] + 1, 'timestamp-ms': m['last-updated-ms'] + 1, 'manifest-list': '$loc/metadata/snap-added.avro', 'summary': {'operation': 'append'}})")
expect_soft "statistics = the list of a snapshot added by the same request" 400 "snap-added.avro" POST $tbl \
  "$(commit "{\"action\":\"add-snapshot\",\"snapshot\":$added},$(stats 424242 "$loc/metadata/snap-added.avro")")"
expect_soft "transactions/commit: statistics = a manifest list" 400 "$l2" POST /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"st\"},\"requirements\":[],\"updates\":[$(stats $s2 "$l2")]}]}"
[ "$(req $T GET $tbl)" = 200 ] || fail "load st"
[ "$(jget '["metadata"]["metadata-log"].__len__()' < "$tmp/body")" = "$(q "len(m['metadata-log'])")" ] ||
  soft "a refused commit changed the table: $(jget '["metadata-location"]' < "$tmp/body")"

# 2. a statistics file of its own
printf 'puffin' > "$dir/metadata/s1-stats.puffin"
expect_soft "a statistics file of its own" 200 "metadata-location" POST $tbl \
  "$(commit "$(stats $s1 "$loc/metadata/s1-stats.puffin")")"

# 3. live files the server does not look for; the expiry keeps them
datafile=$loc/data/$(cd "$dir/data" && find . -name '*.parquet' | head -1 | sed 's#^\./##')
manifest=$loc/metadata/$(cd "$dir/metadata" && find . -name '*-m[0-9]*.avro' | head -1 | sed 's#^\./##')
expect_soft "partition statistics = a live data file" 200 "metadata-location" POST $tbl \
  "$(commit "$(stats $s1 "$datafile" partition),$(stats $s2 "$manifest")")"
rc=0
FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db \
  "$floe" expire shop.st --older-than 0s --retain-last 1 > "$tmp/expire.out" 2>&1 || rc=$?
[ $rc = 0 ] || soft "expire: exit $rc: $(tail -3 "$tmp/expire.out")"
[ -e "${datafile#file://}" ] || soft "expire deleted the live data file named as statistics"
[ -e "${manifest#file://}" ] || soft "expire deleted the live manifest named as statistics"
[ -e "${l3#file://}" ] || soft "expire deleted the current manifest list"
[ ! -e "$dir/metadata/s1-stats.puffin" ] || soft "expire kept the expired snapshot's own statistics file"
n=$(FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db "$floe" scan shop.st 2>"$tmp/scan.err" | wc -l) || true
[ "$n" = 30 ] || soft "scan: $n rows, want 30: $(head -3 "$tmp/scan.err")"
server_alive
openapi_check
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
