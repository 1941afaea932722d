#!/usr/bin/env bash
# Installs what strata's build (and, with --test, its tests) needs on Debian 12.
# Idempotent: asks dpkg which packages are missing, runs `apt-get update` once and installs
# only those; says nothing when everything is already there.
#
#   scripts/deps.sh          build dependencies
#   scripts/deps.sh --test   build and test dependencies
#   scripts/deps.sh --bench  build dependencies plus what tools/bench/run.sh drives
#   scripts/deps.sh --fuzz   build dependencies plus clang-16's libFuzzer (scripts/fuzz.sh)
#   scripts/deps.sh --cluster  build dependencies plus etcd (scripts/cluster.sh)
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libssl-dev librocksdb-dev liburing-dev libisal-dev libtomlplusplus-dev
  libspdlog-dev libfmt-dev libpugixml-dev libgtest-dev libgmock-dev
  libibverbs-dev librdmacm-dev libxxhash-dev nlohmann-json3-dev
)
# s3fs mounts through FUSE 2 (its `fuse` dependency brings fusermount); rclone, s3fs,
# s3cmd and awscli are real clients the e2e tests drive. With CI=true (.ci/run) a test whose
# tool is missing fails instead of skipping (tests/e2e/require.py), so every tool a test
# runs is listed here. moto_server (the upstream S3 store of the write-back and read-through
# tests) has no Debian package: it comes with the python3 on PATH (pip's moto[server];
# the machines' pyenv Python has it); --test checks that it is there. etcd-server gives
# /usr/bin/etcd, which the cluster's unit tests start on loopback
# (tests/unit/storage/etcd_test_server.h; with CI=true they fail without it). chromium
# (headless) is the browser of the CORS test.
TEST_PKGS=(python3 python3-pytest python3-boto3 python3-requests curl awscli openssl clang-format-16
           s3fs fuse rclone s3cmd etcd-server chromium)

# The benchmark's baselines and load generator: nginx (static files and WebDAV PUT), wrk,
# fio (the disk's fsync and sequential write rates) and perf (the profile).
BENCH_PKGS=(nginx wrk fio linux-perf)

# The fuzz harnesses (scripts/fuzz.sh): clang with libFuzzer's runtime, llvm's symbolizer.
FUZZ_PKGS=(clang-16 libclang-rt-16-dev llvm-16)

want=("${BUILD_PKGS[@]}")
test_deps=0
for arg in "$@"; do
  case "$arg" in
    --test) want+=("${TEST_PKGS[@]}"); test_deps=1 ;;
    --bench) want+=("${BENCH_PKGS[@]}") ;;
    --cluster) want+=(etcd-server curl openssl) ;;
    --fuzz) want+=("${FUZZ_PKGS[@]}") ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
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

# What no package installs: moto_server, next to the python3 on PATH (what e2e_new runs)
# or on PATH itself (tests/e2e/require.py looks in the same places).
check_moto() {
  [[ $test_deps -eq 1 ]] || return 0
  local py
  py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
  if [[ -n "$py" && -x "$(dirname "$py")/moto_server" ]] || command -v moto_server >/dev/null; then
    return 0
  fi
  echo "deps.sh: moto_server not found (next to ${py:-python3} or on PATH): the e2e tests" \
       "with an upstream need it (pip install 'moto[server]' into that python3); with" \
       "CI=true they fail" >&2
}

if [[ ${#missing[@]} -eq 0 ]]; then
  check_moto
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
check_moto
