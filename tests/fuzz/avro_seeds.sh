#!/usr/bin/env bash
# avro_seeds.sh <corpus-dir> - fill a scratch corpus for fuzz_avro with the Iceberg
# manifests and manifest lists of the conformance folder (copies go to the scratch folder,
# never into the repository).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
conf=${FLOE_CONFORMANCE:-$here/../../../shared/conformance}
out=${1:?usage: avro_seeds.sh <corpus-dir>}
[ -d "$conf/iceberg" ] || { echo "avro_seeds.sh: missing $conf/iceberg" >&2; exit 1; }
mkdir -p "$out"
n=0
while IFS= read -r -d '' f; do
    cp "$f" "$out/$(printf '%03d' $n)-$(basename "$f")"
    n=$((n + 1))
done < <(find "$conf/iceberg" -name '*.avro' -print0 | sort -z)
echo "avro_seeds.sh: $n seeds in $out"
