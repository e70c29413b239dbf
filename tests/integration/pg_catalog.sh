#!/usr/bin/env bash
# PostgreSQL catalog: start a throwaway server (tests/lib/pg.sh) and run test_pg_catalog
# against it (the catalog suite, leases, connection loss, the PyIceberg/Java layout), then
# check the layout once more from psql's side and the floe CLI on the PostgreSQL catalog.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
FLOE=${FLOE_BIN:-$here/build/floe}
bindir=$(dirname "$FLOE")
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$bindir/test_pg_catalog" ] || fail "$bindir/test_pg_catalog not built"

source "$here/tests/lib/pg.sh"
pg_start_test pg_catalog

tmp=$(mktemp -d)
PG_PREV_TRAP2=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
trap 'rm -rf "$tmp"; eval "$PG_PREV_TRAP2"' EXIT

(cd "$tmp" && "$bindir/test_pg_catalog") > "$tmp/unit.log" 2>&1 || { cat "$tmp/unit.log"; fail "test_pg_catalog"; }
grep -q "^skip" "$tmp/unit.log" && { cat "$tmp/unit.log"; fail "tests were skipped although FLOE_PG_URI is set"; }
tail -n 1 "$tmp/unit.log"

# The layout as psql's \d shows it (an independent reader of the server's catalog);
# runs of spaces squeezed so that fixed strings can be compared.
pg_psql -c '\d iceberg_tables' | tr -s ' ' > "$tmp/d_tables.txt"
for want in " catalog_name | character varying(255) | | not null |" \
            " table_namespace | character varying(255) | | not null |" \
            " table_name | character varying(255) | | not null |" \
            " metadata_location | character varying(1000) | | |" \
            " previous_metadata_location | character varying(1000) | | |" \
            " iceberg_type | character varying(5) | | |" \
            "PRIMARY KEY, btree (catalog_name, table_namespace, table_name)"; do
  grep -qF -- "$want" "$tmp/d_tables.txt" || { cat "$tmp/d_tables.txt"; fail "iceberg_tables lacks: $want"; }
done
[ "$(grep -c '| character varying' "$tmp/d_tables.txt")" = 6 ] || fail "iceberg_tables: not 6 columns"
pg_psql -c '\d iceberg_namespace_properties' | tr -s ' ' > "$tmp/d_ns.txt"
for want in " catalog_name | character varying(255) | | not null |" \
            " namespace | character varying(255) | | not null |" \
            " property_key | character varying(255) | | not null |" \
            " property_value | character varying(1000) | | not null |" \
            "PRIMARY KEY, btree (catalog_name, namespace, property_key)"; do
  grep -qF -- "$want" "$tmp/d_ns.txt" || { cat "$tmp/d_ns.txt"; fail "iceberg_namespace_properties lacks: $want"; }
done
[ "$(grep -c '| character varying' "$tmp/d_ns.txt")" = 4 ] || fail "iceberg_namespace_properties: not 4 columns"
pg_psql -c '\d floe_leases' | grep -qF "PRIMARY KEY, btree (catalog_name, table_namespace, table_name, job)" \
  || fail "floe_leases key"

# The CLI on a PostgreSQL catalog, configured the PyIceberg way (.pyiceberg.yaml with
# SQLAlchemy's URL form).
cat > "$tmp/.pyiceberg.yaml" <<YAML
catalog:
  pgcli:
    uri: ${FLOE_PG_URI/postgresql:/postgresql+psycopg2:}
    warehouse: file://$tmp/wh
YAML
pg_sql "INSERT INTO iceberg_namespace_properties VALUES ('pgcli', 'clins', 'exists', 'true')"
out=$(cd "$tmp" && PYICEBERG_HOME="$tmp" HOME="$tmp" FLOE_CATALOG=pgcli "$FLOE" namespace list 2>&1) \
  || fail "floe namespace list: $out"
echo "$out" | grep -q clins || fail "namespace made in PostgreSQL not listed: $out"
echo "pg_catalog: ok"
