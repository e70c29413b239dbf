#!/usr/bin/env bash
# rest_name_locations.sh - the folders floe derives from names hold no byte a URI parser
# reads otherwise (issue 21, adversary F2): a table or namespace named with '#', '?' or
# '%' got a file:// location that PyIceberg (PyArrowFileIO.parse_location: urllib's
# urlparse, which cuts a '#' fragment and a '?' query) and S3FileIO resolve to another
# folder. Now '#' and '?' are percent-encoded in the folder name (%23, %3F; '%' stays, as
# every reader takes it as it is):
#  1. tables "a#b", "q?x", "p%41" and namespace "n#s" (created through `floe catalog
#     serve`) get locations without '#' or '?', distinct from each other, and the folder
#     a URI parser finds at each location (urlparse) is the one floe wrote: its metadata
#     file is there;
#  2. rows appended through the server are read back by DuckDB from the data files at the
#     location (as written, and as urlparse resolves it), and by floe scan;
#  3. a name holding '/' (%2F in the path) is a 400, not a folder below;
#  4. the namespace folder REST checks against (a create's location inside it) is the
#     encoded one: a location in the derived folder is taken.
set -euo pipefail
name=rest_name_locations
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }
js=$src/tests/js
command -v node >/dev/null && [ -d "$js/node_modules/@duckdb/node-api" ] ||
  { echo "$name: node or @duckdb/node-api missing, skipped"; exit 77; }

"$floe" namespace create shop >/dev/null
start_server
T=open
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
expect 200 $T POST /v1/namespaces '{"namespace":["n#s"]}'
seq 1 10 | sed 's/.*/{"id":&}/' > "$tmp/in.ndjson"
locs=()
for id in 'shop a#b' 'shop q?x' 'shop p%41' 'n#s t#1' 'n#s plain'; do
  ns=${id%% *} t=${id#* }
  got=$(req $T POST "/v1/namespaces/$(enc "$ns")/tables" "{\"name\":\"$t\",\"schema\":$id_schema}")
  [ "$got" = 200 ] || { soft "create $ns.$t: $got $(head -c 300 "$tmp/body")"; continue; }
  loc=$(jget '["metadata"]["location"]' < "$tmp/body")
  meta=$(jget '["metadata-location"]' < "$tmp/body")
  locs+=("$loc")
  case $loc in *'#'* | *'?'*) soft "$ns.$t: location $loc holds '#' or '?'" ;; esac
  # 1. the folder a URI parser finds there holds the metadata floe wrote
  python3 - "$loc" "$meta" <<'PY' || soft "$ns.$t: a URI parser does not find the table at $loc"
import os, sys
from urllib.parse import urlparse
loc, meta = sys.argv[1], sys.argv[2]
path, mpath = urlparse(loc).path, urlparse(meta).path
assert meta.startswith(loc + "/metadata/"), (loc, meta)
assert os.path.isfile(mpath), mpath
assert os.path.isdir(path) and os.path.samefile(os.path.dirname(os.path.dirname(mpath)), path), path
PY
  # 2. rows through the server, read by DuckDB at the location
  FLOE_CATALOG_URI=$base "$floe" append "$ns.$t" "$tmp/in.ndjson" >"$tmp/append.out" 2>&1 ||
    { soft "append $ns.$t: $(tail -2 "$tmp/append.out")"; continue; }
  upath=$(python3 -c 'import sys; from urllib.parse import urlparse; print(urlparse(sys.argv[1]).path)' "$loc")
  for at in "$loc" "$upath"; do
    n=$(node "$js/duckdb_query.mjs" "SELECT count(*)::VARCHAR AS n FROM read_parquet('$at/data/**/*.parquet')" 2>"$tmp/duck.err" | jget '["n"]' 2>/dev/null) || true
    [ "$n" = 10 ] || soft "$ns.$t: DuckDB reads $n rows at $at, want 10: $(head -2 "$tmp/duck.err")"
  done
  n=$(FLOE_CATALOG_URI=$base "$floe" scan "$ns.$t" 2>"$tmp/scan.err" | wc -l) || true
  [ "$n" = 10 ] || soft "$ns.$t: floe scan: $n rows: $(head -2 "$tmp/scan.err")"
done
# the locations are distinct
[ "$(printf '%s\n' "${locs[@]}" | sort -u | wc -l)" = "${#locs[@]}" ] || soft "two tables share a location: ${locs[*]}"

# 3. a '/' in a name
expect_soft "a table named x/y" 400 "not allowed" POST /v1/namespaces/shop/tables "{\"name\":\"x/y\",\"schema\":$id_schema}"
expect_soft "a namespace x/y" 400 "x/y" POST /v1/namespaces '{"namespace":["x/y"]}'
[ ! -e "$FLOE_WAREHOUSE/shop/x" ] && [ ! -e "$FLOE_WAREHOUSE/x" ] || soft "a folder was made for a name with '/'"

# 4. a location inside the encoded namespace folder
nsdir=$(python3 -c 'import sys; from urllib.parse import urlparse; print(sys.argv[1].rsplit("/", 1)[0])' "${locs[3]:-x/y}")
expect_soft "create in the namespace folder" 200 metadata-location POST "/v1/namespaces/$(enc 'n#s')/tables" \
  "{\"name\":\"placed\",\"schema\":$id_schema,\"location\":\"$nsdir/placed-here\"}"

server_alive
[ "$fails" = 0 ] || fail "$fails cases failed"
echo "$name: ok"
