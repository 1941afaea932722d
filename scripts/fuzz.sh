#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz, clang-16, into build/fuzz) and runs each one
# for a bounded time, one after the other; prints the executions of each and fails when
# one finds a crash, a sanitizer report, a leak, a hang or a broken property.
#
#   scripts/fuzz.sh                     every harness, 15 s each (what scripts/test.sh runs)
#   scripts/fuzz.sh 3600                every harness for an hour each
#   scripts/fuzz.sh 600 http_request    one harness (names: tests/fuzz/<name>_fuzz.cc)
#   scripts/fuzz.sh --build-only        just build
#
# Each harness reads its seeds from tests/fuzz/corpus/<name>/ (never written to) and grows
# its own corpus in build/fuzz/corpus/<name>/, which later runs start from. A failing input
# is saved as build/fuzz/artifacts/<name>-crash-<sha1> (reproduce: build/fuzz/bin/<name>_fuzz
# FILE); keep it as a regression seed in tests/fuzz/corpus/<name>/ once fixed.
# --bin-dir DIR: run the harnesses of an existing build (ctest's fuzz_* tests do).
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=""
build_only=0
while [[ $# -gt 0 && "$1" == --* ]]; do
  case "$1" in
    --bin-dir) bin_dir=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    *) echo "usage: scripts/fuzz.sh [--bin-dir DIR] [--build-only] [SECONDS] [HARNESS...]" >&2
       exit 2 ;;
  esac
done
seconds=15
if [[ $# -gt 0 ]]; then
  seconds=$1
  shift
fi

if [[ -z "$bin_dir" ]]; then
  scripts/deps.sh --fuzz
  # Its own configuration: clang, and only the parsers' sources (tests/fuzz/CMakeLists.txt).
  CC=clang-16 CXX=clang++-16 cmake -S . -B build/fuzz -G Ninja -DSTRATA_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=Fuzz >/dev/null
  cmake --build build/fuzz -j "$(nproc)"
  bin_dir=build/fuzz/bin
fi
[[ $build_only -eq 1 ]] && exit 0
work=$(cd "$bin_dir/.." && pwd)

harnesses=("$@")
if [[ ${#harnesses[@]} -eq 0 ]]; then
  for src in tests/fuzz/*_fuzz.cc; do
    name=$(basename "$src" .cc)
    harnesses+=("${name%_fuzz}")
  done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || true)
[[ -z "$symbolizer" && -x /usr/lib/llvm-16/bin/llvm-symbolizer ]] &&
  symbolizer=/usr/lib/llvm-16/bin/llvm-symbolizer
[[ -n "$symbolizer" ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer

failed=()
summary=()
for name in "${harnesses[@]}"; do
  exe="$bin_dir/${name}_fuzz"
  if [[ ! -x "$exe" ]]; then
    echo "fuzz.sh: no harness $exe" >&2
    failed+=("$name")
    continue
  fi
  corpus="$work/corpus/$name"
  mkdir -p "$corpus" "$work/artifacts" "$work/logs"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/$name-")
  [[ -f "tests/fuzz/$name.dict" ]] && args+=(-dict="tests/fuzz/$name.dict")
  seeds=()
  [[ -d "tests/fuzz/corpus/$name" ]] && seeds+=("tests/fuzz/corpus/$name")
  log="$work/logs/$name.log"
  echo "fuzz.sh: $name for ${seconds}s (log: $log)" >&2
  rc=0
  "$exe" "${args[@]}" "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  execs=${execs:-0}
  units=$(find "$corpus" -type f | wc -l)
  if [[ $rc -ne 0 ]]; then
    failed+=("$name")
    echo "fuzz.sh: $name FAILED (exit $rc); the end of $log:" >&2
    tail -40 "$log" >&2
    summary+=("$(printf '%-16s %10s execs %8s/s  corpus %5s  FAILED' "$name" "$execs" \
      $((execs / (seconds > 0 ? seconds : 1))) "$units")")
  else
    summary+=("$(printf '%-16s %10s execs %8s/s  corpus %5s  ok' "$name" "$execs" \
      $((execs / (seconds > 0 ? seconds : 1))) "$units")")
  fi
done

echo "fuzz.sh: ${seconds}s per harness"
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: failed: ${failed[*]} (inputs in $work/artifacts/)" >&2
  exit 1
fi
