#!/usr/bin/env bash
# table_property_values.sh - `floe table properties set` and `floe table create --property`
# refuse a value floe reads but cannot use (adversary finding 1 on issue 24), as they do
# for write.parquet.* and history.expire.*: the metrics modes every write reads
# (write.metadata.metrics.default, .column.*, .max-inferred-column-defaults) and the
# manifest merging settings (commit.manifest-merge.enabled, commit.manifest.*), which
# were stored silently and then warned about on every append, or turned merging off.
# Exit 2 naming the property, the table unchanged; good values are taken, and merging
# still happens after a refused value.
name=table_property_values oracle=
source "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
"$floe" table create ns.t --schema s.json >/dev/null
printf '{"k":"a","v":1}\n' > in.ndjson
"$floe" append ns.t in.ndjson >/dev/null

before=$(meta ns.t)
for kv in write.metadata.metrics.default=garbage 'write.metadata.metrics.default=truncate(0)' \
          'write.metadata.metrics.column.k=truncate(-1)' write.metadata.metrics.column.v=partial \
          write.metadata.metrics.max-inferred-column-defaults=-1 \
          commit.manifest-merge.enabled=maybe commit.manifest-merge.enabled= \
          commit.manifest.min-count-to-merge=-5 commit.manifest.min-count-to-merge=x \
          commit.manifest.target-size-bytes=0 \
          commit.manifest.target-size-bytes=99999999999999999999999; do
  usage_refused "properties set $kv" "${kv%%=*}" table properties ns.t set "$kv"
  usage_refused "create --property $kv" "${kv%%=*}" table create ns.u --schema s.json --property "$kv"
done
[ "$(meta ns.t)" = "$before" ] || fail "a refused value changed the table"
"$floe" table describe ns.u >/dev/null 2>&1 && fail "a refused create made the table"

for kv in write.metadata.metrics.default=full 'write.metadata.metrics.column.k=truncate(8)' \
          write.metadata.metrics.column.v=counts write.metadata.metrics.max-inferred-column-defaults=0 \
          commit.manifest-merge.enabled=TRUE commit.manifest.min-count-to-merge=3 \
          commit.manifest.target-size-bytes=8388608; do
  "$floe" table properties ns.t set "$kv" >/dev/null || fail "properties set $kv refused"
done
# the values in force: merging after 3 manifests, no warnings on append
for _ in 1 2 3 4; do "$floe" append ns.t in.ndjson >/dev/null 2>err.txt; done
[ ! -s err.txt ] || fail "append warned: $(cat err.txt)"
"$floe" append ns.t in.ndjson > out.txt 2>&1
manifests=$(sed -n 's/.*; \([0-9]*\) manifests (.*/\1/p' out.txt)
[ -n "$manifests" ] && [ "$manifests" -le 3 ] ||
  fail "6 appends with min-count-to-merge=3 left '$manifests' manifests: $(cat out.txt)"

[ "$fails" -eq 0 ] || exit 1
echo "$name: ok"
