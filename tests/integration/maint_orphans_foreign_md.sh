#!/usr/bin/env bash
# maint_orphans_foreign_md.sh - adversary finding N2 on issue 21 (adv21e): orphan removal
# refused a location holding another table's *.metadata.json in a subfolder, but took one
# in the table's own metadata folder for the table's own, so a table made in the folder of
# a table dropped without purge deleted that table's metadata, manifests and data files
# as orphans. `floe orphans` now reads every metadata file of the table's own metadata
# folder that the table does not reference, and refuses (nothing deleted, the file named)
# when its table-uuid is another's; an unreferenced one of the table's own is still an
# orphan.
set -euo pipefail
name=maint_orphans_foreign_md oracle=
. "$(dirname "$0")/lib/table_cli_common.sh"
cd "$tmp"
printf '{"k":"x","v":1}\n' > e.ndjson
for t in a b; do
  "$floe" table create ns.$t --schema s.json >/dev/null
  "$floe" append ns.$t e.ndjson >/dev/null
done
tree() { (cd "$1" && find . -type f | sort | xargs -r sha256sum); }

# another table's metadata file (and a data file beside it) in ns.a's metadata folder, as
# a dropped table's kept files would be
ma=$(dirname "$(meta ns.a)")
mb=$(meta ns.b)
cp "$mb" "$ma/00000-from-b.metadata.json"
cp "$(ls wh/ns/b/data/*.parquet | head -1)" "wh/ns/a/data/from-b.parquet"
touch -d '10 days ago' "$ma/00000-from-b.metadata.json" wh/ns/a/data/from-b.parquet
tree wh/ns/a > before.txt
rc=0; "$floe" orphans ns.a --older-than 1d --force > out.txt 2> err.txt || rc=$?
[ $rc != 0 ] || fail "orphans deleted around another table's metadata file: $(cat out.txt)"
grep -q "00000-from-b.metadata.json" err.txt || fail "the refusal does not name the file: $(cat err.txt)"
grep -q "another table's" err.txt || fail "the refusal does not say whose file it is: $(cat err.txt)"
tree wh/ns/a > after.txt
cmp -s before.txt after.txt || fail "files were deleted: $(diff before.txt after.txt | head -3)"

# the table's own unreferenced metadata file (same table-uuid) is an orphan as before
rm -f "$ma/00000-from-b.metadata.json"
cp "$(meta ns.a)" "$ma/00099-leftover.metadata.json"
touch -d '10 days ago' "$ma/00099-leftover.metadata.json"
"$floe" orphans ns.a --older-than 1d --force > out.txt 2> err.txt || fail "orphans: $(cat err.txt)"
[ ! -e "$ma/00099-leftover.metadata.json" ] || fail "the table's own leftover metadata file was kept"
[ ! -e wh/ns/a/data/from-b.parquet ] || fail "the unreferenced data file was kept"
[ "$("$floe" scan ns.a | wc -l)" = 1 ] || fail "orphans changed ns.a"

[ $fails = 0 ] || { echo "$name: $fails failures" >&2; exit 1; }
echo "$name: ok"
