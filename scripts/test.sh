#!/usr/bin/env bash
# Builds strata with AddressSanitizer and runs every test (labels unit and e2e), then builds
# the libFuzzer harnesses and runs each for STRATA_FUZZ_SECONDS (default 15; scripts/fuzz.sh).
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` or `-R e2e_new`; with any,
# the fuzzers are skipped (run them alone with scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh --test
scripts/build.sh Asan

# ctest's exit code is the script's, unless a fuzzer fails.
status=0
ctest --test-dir build/asan --output-on-failure -j2 "$@" || status=$?
if [[ $# -eq 0 ]]; then
  scripts/fuzz.sh "${STRATA_FUZZ_SECONDS:-15}" || status=1
fi
exit $status
