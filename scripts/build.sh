#!/usr/bin/env bash
# Builds strata: scripts/build.sh [Release|Debug|Asan] (default Release) into build/<type>.
# Extra arguments go to `cmake --build` (e.g. `--target common_tests`).
set -euo pipefail
cd "$(dirname "$0")/.."

type=${1:-Release}
[[ $# -gt 0 ]] && shift
case "$type" in
  Release|Debug|Asan) ;;
  *) echo "usage: scripts/build.sh [Release|Debug|Asan] [cmake --build args...]" >&2; exit 2 ;;
esac

scripts/deps.sh

dir="build/${type,,}"
extra=()
if [[ "$type" == Asan ]]; then
  extra+=(-DSTRATA_WERROR=ON)
else
  extra+=(-DBUILD_TESTING=OFF)  # the test suite builds and runs the Asan configuration
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" "${extra[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" "$@"
