#!/usr/bin/env bash
# tables_remote.sh - the table commands end to end on remote back ends: the same workflow
# runs for three set-ups,
#   a. SQLite catalog     + s3:// warehouse (the signature-checking S3 server),
#   b. PostgreSQL catalog + local warehouse (tests/lib/pg.sh),
#   c. PostgreSQL catalog + s3:// warehouse.
# Workflow: namespace + table partitioned by event_type and day(ts); three appends of
# generated events (one snapshot each); a filtered scan and a full scan compared row for
# row with the input (canon_ndjson.mjs + compare.mjs); time travel to the first snapshot;
# rewrite-manifests (scan unchanged); floe rewrite (compaction, scan unchanged); expire
# --retain-last 1: the scan is unchanged, every file expire deleted is gone from the
# bucket/folder, and the data files left are exactly the live ones; orphans with planted
# objects: the dry run lists exactly them, the real run deletes exactly them.
# The bucket is listed with tests/js/s3_cli.mjs (its own SigV4 signer, not floe's).
# Last, `floe serve` refuses a catalog URI that is neither SQLite nor PostgreSQL (serve on
# PostgreSQL + s3:// is tested by serve_remote.sh and serve_scale.sh).
# Skips (exit 77, "SKIPPED") only when PostgreSQL's server binaries are missing.
set -euo pipefail

src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
floe=${FLOE_BIN:-$src/build/floe}
js=$src/tests/js
schema=$src/tests/data/events.schema.json
fail() { echo "tables_remote: FAIL [${setup:-}]: $*" >&2; [ -n "${KEEP:-}" ] && echo "kept ${tmp:-}" >&2; exit 1; }

source "$src/tests/lib/pg.sh"
pg_start_test tables_remote

tmp=$(mktemp -d)
pids=()
PREV_TRAP=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; eval "$PREV_TRAP"' EXIT
unset FLOE_CONFIG FLOE_CATALOG_TYPE FLOE_CATALOG || true

source "$src/tests/lib/s3sig.sh"
s3sig_start "$tmp" || fail "could not start the S3 server"
port=$S3SIG_PORT

# Input: three batches, the expected rows in canonical form.
for i in 1 2 3; do
  "$floe" gen --seed $((40 + i)) --count 1200 --start 2026-10-01T23:59:59Z \
    -o "$tmp/in$i.ndjson" > /dev/null 2>&1 || fail "gen"
  node "$js/canon_ndjson.mjs" --schema "$schema" "$tmp/in$i.ndjson" > "$tmp/exp$i.ndjson"
done
cat "$tmp/exp1.ndjson" "$tmp/exp2.ndjson" "$tmp/exp3.ndjson" > "$tmp/exp_all.ndjson"
etype=$(head -n 1 "$tmp/exp1.ndjson" | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).event_type))')
node -e '
  const fs = require("fs"); const t = process.argv[2]
  const out = fs.readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l && JSON.parse(l).event_type === t)
  fs.writeFileSync(process.argv[3], out.map((l) => l + "\n").join(""))' \
  "$tmp/exp_all.ndjson" "$etype" "$tmp/exp_filtered.ndjson"
[ -s "$tmp/exp_filtered.ndjson" ] || fail "no rows of type $etype"

# list LOCATION: every object/file under a table location, as full paths, sorted
list() {
  case $1 in
    s3://*) local rest=${1#s3://} bucket key
            bucket=${rest%%/*}; key=${rest#*/}
            node "$js/s3_cli.mjs" ls "$bucket" "$key/" | sed "s|^|s3://$bucket/|" ;;
    *) find "$1" -type f | sort ;;
  esac
}
# plant LOCATION RELPATH: an object nothing references
plant() {
  echo "planted" > "$tmp/planted.bin"
  case $1 in
    s3://*) local rest=${1#s3://}
            node "$js/s3_cli.mjs" put "${rest%%/*}" "${rest#*/}/$2" "$tmp/planted.bin" ;;
    *) mkdir -p "$(dirname "$1/$2")"; cp "$tmp/planted.bin" "$1/$2" ;;
  esac
}
json() { # FILE EXPR: a value from a JSON file (j is the parsed document)
  node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const v = eval(process.argv[2]); console.log(typeof v === "object" ? JSON.stringify(v) : v)' "$1" "$2"
}
scan_eq() { # EXPECTED WHAT [scan args...]: scan canonical, compare as multisets by event_id
  local exp=$1 what=$2; shift 2
  "$floe" scan "$t" --format canonical "$@" > "$tmp/got.ndjson" 2> "$tmp/scan.err" ||
    fail "$what: scan failed: $(cat "$tmp/scan.err")"
  node "$js/compare.mjs" "$exp" "$tmp/got.ndjson" --sort-key event_id > "$tmp/cmp.out" 2>&1 ||
    fail "$what: rows differ from the input: $(head -c 2000 "$tmp/cmp.out")"
}

workflow() { # SETUP CATALOG_URI WAREHOUSE
  setup=$1
  export FLOE_CATALOG_URI=$2 FLOE_WAREHOUSE=$3
  local ns=ns_$1
  t=$ns.ev
  "$floe" namespace create "$ns" > /dev/null || fail "namespace create"
  "$floe" table create "$t" --schema "$schema" --partition "event_type, day(ts)" > /dev/null ||
    fail "table create"
  "$floe" table describe "$t" --json > "$tmp/desc.json" || fail "table describe"
  local loc
  loc=$(json "$tmp/desc.json" j.location)
  # recorded as an absolute URI: a local warehouse as file:///...
  case $loc in s3://*) want=$3 ;; *) want=file://$3 ;; esac
  case $loc in "$want"/*) ;; *) fail "table location $loc is not under the warehouse $want" ;; esac
  loc=${loc#file://}

  local i
  for i in 1 2 3; do
    "$floe" append "$t" "$tmp/in$i.ndjson" --no-merge --json > "$tmp/app$i.json" ||
      fail "append $i: $(cat "$tmp/app$i.json")"
    [ "$(json "$tmp/app$i.json" j.added_records)" = 1200 ] || fail "append $i: $(cat "$tmp/app$i.json")"
  done
  local snap1
  # (by text: snapshot ids do not fit a JavaScript number)
  snap1=$(grep -oE '"snapshot_id":[0-9]+' "$tmp/app1.json" | cut -d: -f2)
  "$floe" snapshots "$t" --json > "$tmp/snaps.json" || fail "snapshots"
  [ "$(json "$tmp/snaps.json" j.length)" = 3 ] || fail "want 3 snapshots: $(cat "$tmp/snaps.json")"

  scan_eq "$tmp/exp_all.ndjson" "full scan"
  scan_eq "$tmp/exp_filtered.ndjson" "filtered scan" --where "event_type = '$etype'"
  "$floe" scan "$t" --where "event_type = '$etype'" --plan --json > "$tmp/plan.json" || fail "scan --plan"
  "$floe" files "$t" --json > "$tmp/files.json" || fail "files"
  [ "$(json "$tmp/plan.json" 'JSON.stringify(j).split(".parquet").length - 1')" -lt \
    "$(json "$tmp/files.json" j.length)" ] || fail "the filter pruned no files"
  scan_eq "$tmp/exp1.ndjson" "time travel to the first snapshot" --snapshot "$snap1"

  "$floe" rewrite-manifests "$t" --json > "$tmp/rwm.json" || fail "rewrite-manifests: $(cat "$tmp/rwm.json")"
  [ "$(json "$tmp/rwm.json" j.manifests_after)" = 1 ] || fail "rewrite-manifests: $(cat "$tmp/rwm.json")"
  scan_eq "$tmp/exp_all.ndjson" "after rewrite-manifests"

  "$floe" rewrite "$t" --option rewrite-all=true --json --quiet > "$tmp/rw.json" 2> "$tmp/rw.err" ||
    fail "rewrite: $(cat "$tmp/rw.json" "$tmp/rw.err")"
  scan_eq "$tmp/exp_all.ndjson" "after rewrite"
  "$floe" files "$t" --json > "$tmp/files_rw.json" || fail "files"
  [ "$(json "$tmp/files_rw.json" j.length)" -lt "$(json "$tmp/files.json" j.length)" ] ||
    fail "rewrite did not reduce the file count"

  # expire: everything but the current snapshot; the small files the rewrite replaced are
  # now reachable only from expired snapshots
  list "$loc" > "$tmp/before_expire"
  "$floe" expire "$t" --older-than 0s --retain-last 1 --list > "$tmp/exp.list" 2> "$tmp/exp.err" ||
    fail "expire: $(cat "$tmp/exp.err")"
  "$floe" snapshots "$t" --json > "$tmp/snaps.json"
  [ "$(json "$tmp/snaps.json" j.length)" = 1 ] || fail "want 1 snapshot after expiry: $(cat "$tmp/snaps.json")"
  scan_eq "$tmp/exp_all.ndjson" "after expire"
  list "$loc" > "$tmp/after_expire"
  awk -F"\t" 'NF == 2 { print $2 }' "$tmp/exp.list" | sort > "$tmp/deleted" # KIND<TAB>PATH lines
  [ "$(grep -c '\.parquet$' "$tmp/deleted")" -ge "$(json "$tmp/files.json" j.length)" ] ||
    fail "expire deleted too few data files: $(cat "$tmp/exp.list")"
  [ -z "$(comm -12 "$tmp/deleted" "$tmp/after_expire")" ] ||
    fail "files expire reported deleted are still there: $(comm -12 "$tmp/deleted" "$tmp/after_expire")"
  [ -z "$(comm -23 "$tmp/deleted" "$tmp/before_expire")" ] ||
    fail "expire names files that were never there: $(comm -23 "$tmp/deleted" "$tmp/before_expire")"
  json "$tmp/files_rw.json" 'j.map((f) => f.path.replace(/^file:\/\//, "")).sort().join("\n")' > "$tmp/live"
  grep '/data/' "$tmp/after_expire" > "$tmp/data_left" || true
  cmp -s "$tmp/live" "$tmp/data_left" ||
    fail "data files left after expiry are not the live ones: $(diff "$tmp/live" "$tmp/data_left" | head -20)"

  # orphans: planted objects, fresh (hence --older-than 1s --force)
  plant "$loc" "data/event_type=$etype/ts_day=2026-10-01/planted-1.parquet"
  plant "$loc" "data/event_type=zz/planted-2.parquet"
  plant "$loc" "metadata/planted-m0.avro"
  plant "$loc" "_landing/hidden.ndjson.zst"
  printf '%s\n' "$loc/data/event_type=$etype/ts_day=2026-10-01/planted-1.parquet" \
    "$loc/data/event_type=zz/planted-2.parquet" "$loc/metadata/planted-m0.avro" | sort > "$tmp/planted"
  sleep 1.2
  "$floe" orphans "$t" --older-than 1s --force --dry-run --list > "$tmp/odry" 2> "$tmp/odry.err" ||
    fail "orphans --dry-run: $(cat "$tmp/odry.err")"
  sed 's|file://||g' "$tmp/odry" |
    grep -oE '(s3://|/)[^ ]*planted[^ ]*|(s3://|/)[^ ]*\.(parquet|avro|json)' | sort -u > "$tmp/ofound" || true
  cmp -s "$tmp/planted" "$tmp/ofound" ||
    fail "orphans dry run lists other files than the planted ones: $(cat "$tmp/odry")"
  list "$loc" | grep -c planted | grep -qx 3 || fail "orphans --dry-run deleted something"
  "$floe" orphans "$t" --older-than 1s --force --json > "$tmp/orph.json" ||
    fail "orphans: $(cat "$tmp/orph.json")"
  [ "$(json "$tmp/orph.json" j.deleted)" = 3 ] || fail "orphans: $(cat "$tmp/orph.json")"
  list "$loc" > "$tmp/after_orphans"
  ! grep -q planted "$tmp/after_orphans" || fail "planted orphans remain: $(grep planted "$tmp/after_orphans")"
  grep -q '/_landing/hidden.ndjson.zst$' "$tmp/after_orphans" || fail "a file under _landing was deleted"
  [ "$(grep -vc '/_landing/' "$tmp/after_orphans")" = "$(wc -l < "$tmp/after_expire")" ] ||
    fail "orphans deleted more than the planted files"
  scan_eq "$tmp/exp_all.ndjson" "after orphans"
  echo "tables_remote: $setup ok"
}

workflow a "sqlite:///$tmp/catalog.db" s3://wh/a
workflow b "$FLOE_PG_URI" "$tmp/wh-b"
workflow c "$FLOE_PG_URI" s3://wh/c
setup=
# the PostgreSQL catalog holds both tables, each pointing into its own warehouse
pg_sql "SELECT table_namespace || ' ' || split_part(metadata_location, '/', 1) FROM iceberg_tables ORDER BY 1" \
  > "$tmp/pg_tables"
printf 'ns_b file:\nns_c s3:\n' | cmp -s - "$tmp/pg_tables" || fail "PostgreSQL catalog rows: $(cat "$tmp/pg_tables")"
[ "$(s3sig_failures)" = 0 ] || fail "the S3 server saw bad signatures"

# floe serve takes a SQLite or PostgreSQL catalog; any other URI scheme is refused (exit 1,
# the password not echoed) instead of quietly becoming a SQLite file named after the URI.
# (serve on PostgreSQL + s3:// itself: serve_remote.sh and serve_scale.sh.)
setup=serve
mkdir -p "$tmp/serve"
printf '[server]\nlisten = 127.0.0.1:0\nwarehouse = %s\ncatalog = %s\n' "$tmp/serve/wh" \
  "mysql://floe:$PG_PASSWORD@127.0.0.1/x" > "$tmp/serve/s.conf"
set +e
(cd "$tmp/serve" && timeout 20 "$floe" serve --config s.conf > out.txt 2> err.txt)
rc=$?
set -e
[ $rc = 1 ] || fail "serve with a mysql:// catalog: exit $rc, want 1 ($(cat "$tmp/serve/err.txt"))"
grep -q "floe serve takes a SQLite catalog" "$tmp/serve/err.txt" || fail "serve: $(cat "$tmp/serve/err.txt")"
! grep -qF "$PG_PASSWORD" "$tmp/serve/err.txt" || fail "serve echoed the catalog password"
[ ! -e "$tmp/serve/mysql:" ] || fail "serve created a SQLite file named after the URI"
echo "tables_remote: ok"
