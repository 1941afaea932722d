#!/usr/bin/env bash
# Installs what strata's build (and, with --test, its tests) needs on Debian 12.
# Idempotent: asks dpkg which packages are missing, runs `apt-get update` once and installs
# only those; says nothing when everything is already there.
#
#   scripts/deps.sh          build dependencies
#   scripts/deps.sh --test   build and test dependencies
#   scripts/deps.sh --bench  build dependencies plus what tools/bench/run.sh drives
#   scripts/deps.sh --fuzz   build dependencies plus clang-16's libFuzzer (scripts/fuzz.sh)
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libssl-dev librocksdb-dev liburing-dev libisal-dev libtomlplusplus-dev
  libspdlog-dev libfmt-dev libpugixml-dev libgtest-dev libgmock-dev
  libibverbs-dev librdmacm-dev
)
# s3fs mounts through FUSE 2 (its `fuse` dependency brings fusermount); rclone, s3fs and
# s3cmd are real clients the e2e tests drive.
TEST_PKGS=(python3 python3-pytest python3-boto3 python3-requests curl awscli openssl clang-format-16
           s3fs fuse rclone s3cmd)

# The benchmark's baselines and load generator: nginx (static files and WebDAV PUT), wrk,
# fio (the disk's fsync and sequential write rates) and perf (the profile).
BENCH_PKGS=(nginx wrk fio linux-perf)

# The fuzz harnesses (scripts/fuzz.sh): clang with libFuzzer's runtime, llvm's symbolizer.
FUZZ_PKGS=(clang-16 libclang-rt-16-dev llvm-16)

want=("${BUILD_PKGS[@]}")
for arg in "$@"; do
  case "$arg" in
    --test) want+=("${TEST_PKGS[@]}") ;;
    --bench) want+=("${BENCH_PKGS[@]}") ;;
    --fuzz) want+=("${FUZZ_PKGS[@]}") ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "deps.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

missing=()
for pkg in "${want[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    SUDO=(sudo)
  else
    echo "deps.sh: missing packages (${missing[*]}) and not root; install them as root" >&2
    exit 1
  fi
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
