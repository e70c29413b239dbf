#!/usr/bin/env bash
# rest_purge_race.sh - adversary finding F4 on issue 21 (adv21, data loss / leak): a
# DELETE .../tables/t?purgeRequested=true racing commits to t read the metadata pointer,
# then a commit landed a new pointer, then the drop removed the table entry whatever its
# pointer was and the purge deleted the files the old metadata reached: the new version's
# files were never deleted (and, with them left in the folder, the name could not be
# created there again). The purge now drops the table only if its pointer is still the
# one it read (floe_catalog_drop_table_at: one conditional DELETE on the SQL catalogs, a
# claim of v<N+1> on the filesystem catalog), reloads and retries when it moved, and
# deletes the files only after that drop succeeded.
#
# Each round: table shop.t created through the server with one append (CLI through the
# server: data files, a manifest, a manifest list), then three loops of 15 property
# commits (curl) and one more CLI append race a purge sent 0.1 s later. After the round
# either the table exists and every file its metadata reaches is there (its metadata
# files, manifest lists, and a scan reads every manifest and data file: 10 rows per
# append that succeeded), or it is gone and no file is left under its location; and the
# name is created again by the next round. 10 rounds on SQLite, 10 of `floe table drop
# --purge` run on the SQLite catalog itself (no server between) while the server commits
# (the CLI purge had the same race), then 5 on the filesystem catalog (FS_ROUNDS), where
# a commit on the version the purge read created v<N+1> after the drop had removed its
# claims and the table came back with its older files deleted (all 5 rounds failed so
# before the claims stayed as tombstones). The binary before the first fix failed 3 of
# the first 21 rounds and stopped there: SQLite rounds 3 and 7 and CLI round 2 left a metadata file of the commit
# that landed in between, and filesystem round 1 brought the table back with the files
# it reached deleted (its scan failed, its purge answered 500).
name=rest_purge_race
. "$(dirname "$0")/lib/rest_serve_common.sh"
command -v curl >/dev/null || { echo "$name: curl missing, skipped"; exit 77; }

S=$id_schema
T=open
ROUNDS=${ROUNDS:-10}
export FLOE_STATE_DB=$tmp/state.db
seq 1 10 | sed 's/.*/{"id":&}/' > "$tmp/in.ndjson"

# hammer K: 15 property commits to shop.t, one after the other (404s once it is gone)
hammer() {
  local k
  for k in $(seq 15); do
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
      "$base/v1/namespaces/shop/tables/t" \
      -d "{\"requirements\":[],\"updates\":[{\"action\":\"set-properties\",\"updates\":{\"h$1\":\"$k\"}}]}"
  done
}

# rest_append: one CLI append of 10 rows to shop.t through the server
rest_append() { via_rest append shop.t "$tmp/in.ndjson" >/dev/null; }
# via_rest ARGS: floe ARGS with the server as its catalog
via_rest() { FLOE_CATALOG_TYPE=rest FLOE_CATALOG_URI=$base "$floe" "$@"; }

# check_round WHAT LOC ROWS: the table is there with every file its metadata reaches and
# ROWS rows (then it is dropped quietly), or gone with nothing left under LOC
check_round() {
  local what=$1 loc=$2 rows=$3 get left missing n
  get=$(req $T GET /v1/namespaces/shop/tables/t)
  if [ "$get" = 200 ]; then
    missing=$(python3 -c '
import json, os, sys
m = json.load(sys.stdin)["metadata"]
files = [e["metadata-file"] for e in m.get("metadata-log", [])]
files += [s["manifest-list"] for s in m.get("snapshots", [])]
print(" ".join(f for f in files if not os.path.exists(f.replace("file://", "", 1))))' < "$tmp/body")
    [ -z "$missing" ] || soft "$what: the table is there but files it reaches are gone: $missing"
    n=$(via_rest scan shop.t 2>"$tmp/scan.err" | wc -l) ||
      soft "$what: the table is there but its scan fails: $(head -c 300 "$tmp/scan.err")"
    [ "$n" = "$rows" ] || soft "$what: the table is there with $n rows, expected $rows: $(head -c 300 "$tmp/scan.err")"
    [ "$(req $T DELETE "/v1/namespaces/shop/tables/t?purgeRequested=true")" = 204 ] ||
      soft "$what: the purge after the round failed: $(head -c 300 "$tmp/body")"
    kept=$((kept + 1))
  elif [ "$get" = 404 ]; then
    gone=$((gone + 1))
  else
    soft "$what: load answered $get: $(head -c 300 "$tmp/body")"
  fi
  # (a filesystem commit that landed before the drop may write its best-effort version
  # hint after the drop removed it: a stray hint, no table - the window docs/DESIGN.md
  # names under "Drop with purge"; and the filesystem drop's claims stay, empty v<N>
  # files, so that no commit of the dropped table can come after it)
  left=$(find "$loc" -type f ! -path '*/metadata/version-hint.text' \
    ! \( -empty -path '*/metadata/v*.metadata.json' \) 2>/dev/null | sort)
  # (filesystem: a commit two versions behind whose create came after the drop leaves its
  # metadata file, the table still dropped - the window docs/DESIGN.md leaves open; the
  # 300 ms pause widens it. Counted, not failed: nothing of the table is lost.)
  if [ -n "$keep_claims" ] && [ -n "$left" ]; then
    late=$(echo "$left" | grep -c '/metadata/v[0-9]*\.metadata\.json$' || true)
    [ "$late" = 0 ] || echo "$name: $what: $late metadata file(s) of a late commit left beside the claims (removed)"
    echo "$left" | grep '/metadata/v[0-9]*\.metadata\.json$' | xargs -r rm -f
    left=$(echo "$left" | grep -v '/metadata/v[0-9]*\.metadata\.json$' || true)
  fi
  [ -z "$left" ] || soft "$what: the table is gone (load $get) but $(echo "$left" | wc -l) files are left under its location: $(echo "$left" | head -3 | tr '\n' ' ')"
  # the next round creates the name again past the claims (filesystem) or in a clean folder
  [ -n "$keep_claims" ] && [ -z "$left" ] || rm -rf "$loc"
}

# rounds WHAT CLI: ROUNDS rounds on the server running; CLI non-empty: the purge is
# `floe table drop --purge` on the server's own catalog instead of the server's DELETE
rounds() {
  local what=$1 cli=$2 i loc del hp ap rows
  kept=0 gone=0
  for i in $(seq "$ROUNDS"); do
    expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"t\",\"schema\":$S}"
    loc=$(jget '["metadata"]["location"]' < "$tmp/body")
    loc=${loc#file://}
    rest_append || fail "$what round $i: the first append failed"
    hp=
    for h in 1 2 3; do hammer $h & hp="$hp $!"; done
    rest_append 2>"$tmp/a1.err" & ap=$!
    sleep 0.1
    if [ -n "$cli" ]; then
      "$floe" table drop shop.t --purge >"$tmp/body" 2>&1 && del=204 || del=fail
    else
      del=$(req $T DELETE "/v1/namespaces/shop/tables/t?purgeRequested=true")
    fi
    # shellcheck disable=SC2086
    wait $hp
    rows=10
    if wait "$ap"; then rows=20; fi
    case $del in
      204) ;;
      409) grep -q CommitFailedException "$tmp/body" ||
             soft "$what round $i: 409 but not CommitFailedException: $(head -c 300 "$tmp/body")" ;;
      fail) grep -q 'not dropped' "$tmp/body" ||
              soft "$what round $i: drop --purge failed: $(head -c 300 "$tmp/body")" ;;
      *) soft "$what round $i: the purge answered $del: $(head -c 300 "$tmp/body")" ;;
    esac
    check_round "$what round $i (purge $del)" "$loc" "$rows"
  done
  # and the name once more
  expect 200 $T POST /v1/namespaces/shop/tables "{\"name\":\"t\",\"schema\":$S}"
  expect 204 $T DELETE "/v1/namespaces/shop/tables/t?purgeRequested=true"
  echo "$name: $what: $gone rounds dropped, $kept kept (a commit won; purged after)"
  server_alive
}

"$floe" namespace create shop >/dev/null
start_server
keep_claims=
rounds "sqlite catalog" ""
rounds "CLI drop --purge on the sqlite catalog" cli

# The filesystem catalog: a commit that looked at v<N> before the drop's claim and
# created v<N+1> after the drop had removed its claims (its last step) brought the table
# back with the files the purge deleted. The claims now stay (tombstones; docs/DESIGN.md,
# "Drop with purge"), and the next round's create of the name starts past them. The
# server holds each commit 300 ms between its look at the current version and its create
# of the next (FLOE_TEST_FS_COMMIT_PAUSE_MS), so the purge lands in that window in most
# rounds rather than now and then.
keep_claims=1
to_fs_catalog "$tmp/fswh"
"$floe" namespace create shop >/dev/null
export FLOE_TEST_FS_COMMIT_PAUSE_MS=300
start_server
unset FLOE_TEST_FS_COMMIT_PAUSE_MS
ROUNDS=${FS_ROUNDS:-5}
rounds "filesystem catalog" ""
[ "$fails" = 0 ] || fail "$fails checks failed"
echo "$name: ok"
