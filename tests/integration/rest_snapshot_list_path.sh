#!/usr/bin/env bash
# rest_snapshot_list_path.sh - `floe catalog serve` refuses an add-snapshot whose
# manifest list is a file the table holds in another role (issue 21, data loss): the
# server took a snapshot whose manifest-list was another snapshot's list, a statistics
# file or a metadata file, and the expiry of either owner deleted it from under the other.
#  1. add-snapshot with manifest-list = another snapshot's list (also spelt file:/), a
#     statistics file, a partition statistics file, a metadata-log file, the current
#     metadata file: 400 BadRequestException naming the path, nothing committed; also
#     through transactions/commit;
#  2. a manifest list of its own is taken (200), and the table still scans every row.
set -euo pipefail
name=rest_snapshot_list_path
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

shop_table sl 3
serve_table sl
q() { loaded "$tmp/sl.json" "$1"; }
read -r s1 s2 s3 <<<"$(in_order "$tmp/sl.json" snapshot-id)"
read -r l1 l2 l3 <<<"$(in_order "$tmp/sl.json" manifest-list)"
loc=$(q "m['location']")
dir=$tmp/wh/shop/sl
commit() { printf '{"requirements":[],"updates":[%s]}' "$1"; }

# statistics and partition statistics files of s1, set first (taken)
printf 'puffin' > "$dir/metadata/s1-stats.puffin"
printf 'parquet' > "$dir/metadata/s1-pstats.parquet"
expect_soft "statistics files of their own" 200 "metadata-location" POST $tbl "$(commit \
  "{\"action\":\"set-statistics\",\"statistics\":{\"snapshot-id\":$s1,\"statistics-path\":\"$loc/metadata/s1-stats.puffin\",\"file-size-in-bytes\":6,\"file-footer-size-in-bytes\":4,\"blob-metadata\":[]}},{\"action\":\"set-partition-statistics\",\"partition-statistics\":{\"snapshot-id\":$s1,\"statistics-path\":\"$loc/metadata/s1-pstats.parquet\",\"file-size-in-bytes\":7}}")"
cp "$tmp/body" "$tmp/sl.json"
logfile=$(q "m['metadata-log'][0]['metadata-file']")
current=$(q "d['metadata-location']")
nlog=$(q "len(m['metadata-log'])")

# snap ID LIST: an add-snapshot of a new snapshot ID whose manifest list is LIST (a child
# of the current one, its sequence number left to the server; each case its own id, so
# that each stands alone with the binary before the fix)
snap() {
  printf '{"action":"add-snapshot","snapshot":%s}' "$(q "json.dumps({'snapshot-id': $1, 'parent-snapshot-id': m['current-snapshot-id'], 'timestamp-ms': m['last-updated-ms'] + 1, 'manifest-list': '$2', 'summary': {'operation': 'append'}})")"
}

# 1. refused
expect_soft "manifest list = the current snapshot's list" 400 "manifest-list $l3 is the manifest list of snapshot $s3" \
  POST $tbl "$(commit "$(snap 515151 "$l3")")"
grep -q BadRequestException "$tmp/body" || soft "not a BadRequestException: $(head -c 300 "$tmp/body")"
expect_soft "manifest list = an older snapshot's list" 400 "$l1" POST $tbl "$(commit "$(snap 515152 "$l1")")"
l2_short=file:/${l2#file:///}
expect_soft "manifest list = another list spelt file:/" 400 "$l2_short" POST $tbl "$(commit "$(snap 515153 "$l2_short")")"
expect_soft "manifest list = a statistics file" 400 "is the statistics file of snapshot $s1" POST $tbl \
  "$(commit "$(snap 515154 "$loc/metadata/s1-stats.puffin")")"
expect_soft "manifest list = a partition statistics file" 400 "s1-pstats.parquet" POST $tbl \
  "$(commit "$(snap 515155 "$loc/metadata/s1-pstats.parquet")")"
expect_soft "manifest list = a metadata-log file" 400 "$logfile" POST $tbl "$(commit "$(snap 515156 "$logfile")")"
expect_soft "manifest list = the current metadata file" 400 "$current" POST $tbl "$(commit "$(snap 515157 "$current")")"
expect_soft "transactions/commit: manifest list = another snapshot's" 400 "$l2" POST /v1/transactions/commit \
  "{\"table-changes\":[{\"identifier\":{\"namespace\":[\"shop\"],\"name\":\"sl\"},\"requirements\":[],\"updates\":[$(snap 515158 "$l2")]}]}"
[ "$(req $T GET $tbl)" = 200 ] || fail "load sl"
[ "$(jget '["metadata"]["metadata-log"].__len__()' < "$tmp/body")" = "$nlog" ] ||
  soft "a refused commit changed the table: $(jget '["metadata-location"]' < "$tmp/body")"

# 2. a list of its own, made the current snapshot
cp "${l3#file://}" "$dir/metadata/snap-own.avro"
expect_soft "a manifest list of its own" 200 "metadata-location" POST $tbl \
  "$(commit "$(snap 515159 "$loc/metadata/snap-own.avro"),{\"action\":\"set-snapshot-ref\",\"ref-name\":\"main\",\"type\":\"branch\",\"snapshot-id\":515159}")"
n=$(FLOE_CATALOG_URI=$base FLOE_STATE_DB=$tmp/state.db "$floe" scan shop.sl 2>"$tmp/scan.err" | wc -l) || true
[ "$n" = 30 ] || soft "scan: $n rows, want 30: $(head -3 "$tmp/scan.err")"
server_alive
openapi_check
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
