# Sourced by the variant pruning tests. variant_prune_check TABLE FILTER N [M]: `floe scan
# TABLE --where FILTER` prints the rows the same scan with --no-prune prints, --stats says
# the variant pruning skipped N files in all (by the variant's manifest bounds, counted in
# files_skipped_metrics, and then by the footers' shredded statistics,
# files_skipped_variant), and M of them at the manifest stage when M is given. Needs
# $floe, $tmp and fail().
variant_prune_check() {
  local table=$1 where=$2 want=$3 want_m=${4:-}
  "$floe" scan "$table" --where "$where" --stats 2> "$tmp/stats" | sort > "$tmp/pruned" ||
    fail "scan --where \"$where\": $(cat "$tmp/stats")"
  "$floe" scan "$table" --where "$where" --no-prune | sort > "$tmp/all" ||
    fail "scan --no-prune --where \"$where\""
  cmp -s "$tmp/pruned" "$tmp/all" ||
    fail "\"$where\": pruned and unpruned scans differ: $(diff "$tmp/pruned" "$tmp/all" | head -4)"
  local got
  got=$(python3 -c 'import json,sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(s["files_skipped_metrics"] + s["files_skipped_variant"], s["files_skipped_metrics"])' "$tmp/stats") ||
    fail "\"$where\": no files_skipped_variant in --stats: $(cat "$tmp/stats")"
  [ "${got% *}" = "$want" ] || fail "\"$where\": skipped ${got% *} files, expected $want"
  [ -z "$want_m" ] || [ "${got#* }" = "$want_m" ] ||
    fail "\"$where\": skipped ${got#* } files by manifest bounds, expected $want_m"
  echo "  $(wc -l < "$tmp/pruned") rows, ${got% *} files skipped (${got#* } by manifest bounds): $where"
}
