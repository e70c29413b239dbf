#!/usr/bin/env bash
# readme_examples.sh - README.md's shell examples, extracted from it and run against the
# built floe (tests/integration/lib/readme_examples.py says how blocks are marked and
# run), then the harness's self-test: a failing example, an unmarked block, a wrong
# output and a stale substitution must each fail it.
set -euo pipefail
src=${FLOE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
for tool in python3 bash curl gzip zcat sed; do
  command -v $tool >/dev/null || { echo "readme_examples: SKIP: no $tool"; exit 77; }
done
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=99
export UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:exitcode=98
rc=0
python3 "$src/tests/integration/lib/readme_examples.py" "$src/README.md" || rc=$?
[ $rc = 0 ] || [ $rc = 77 ] || exit $rc
python3 "$src/tests/integration/lib/readme_examples.py" --self-test
exit $rc
