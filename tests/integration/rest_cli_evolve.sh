#!/usr/bin/env bash
# rest_cli_evolve.sh - table_schema_evolve.sh (schema and partition evolution, icebird
# reading the result) again through `floe catalog serve`: FLOE_TEST_CATALOG=rest puts the
# server in front of its SQLite catalog (lib/table_cli_common.sh). The other table CLI
# tests run so in rest_cli_suite.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rc=0
FLOE_TEST_CATALOG=rest bash "$here/table_schema_evolve.sh" || rc=$?
case $rc in
  0) echo "rest_cli_evolve: ok" ;;
  77) echo "rest_cli_evolve: skipped (table_schema_evolve.sh skipped)"; exit 77 ;;
  *) echo "rest_cli_evolve: FAIL: table_schema_evolve through REST (exit $rc)" >&2; exit 1 ;;
esac
