#!/usr/bin/env bash
# Builds strata with AddressSanitizer and runs every test (labels unit and e2e).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` or `-R e2e_new`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh --test
scripts/build.sh Asan

# ctest's exit code is the script's.
exec ctest --test-dir build/asan --output-on-failure -j2 "$@"
