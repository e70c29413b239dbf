# Sourced by the variant pruning tests. variant_prune_check TABLE FILTER N: `floe scan
# TABLE --where FILTER` prints the rows the same scan with --no-prune prints, and --stats
# says the variant statistics skipped N files. Needs $floe, $tmp and fail().
variant_prune_check() {
  local table=$1 where=$2 want=$3
  "$floe" scan "$table" --where "$where" --stats 2> "$tmp/stats" | sort > "$tmp/pruned" ||
    fail "scan --where \"$where\": $(cat "$tmp/stats")"
  "$floe" scan "$table" --where "$where" --no-prune | sort > "$tmp/all" ||
    fail "scan --no-prune --where \"$where\""
  cmp -s "$tmp/pruned" "$tmp/all" ||
    fail "\"$where\": pruned and unpruned scans differ: $(diff "$tmp/pruned" "$tmp/all" | head -4)"
  local got
  got=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["files_skipped_variant"])' "$tmp/stats") ||
    fail "\"$where\": no files_skipped_variant in --stats: $(cat "$tmp/stats")"
  [ "$got" = "$want" ] || fail "\"$where\": skipped $got files, expected $want"
  echo "  $(wc -l < "$tmp/pruned") rows, $got files skipped: $where"
}
