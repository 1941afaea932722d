#!/usr/bin/env bash
# Runs the public ceph/s3-tests suite against strata and summarizes it by area (what issue
# 20 measures: bucket policies, ACLs, public access, ownership, CORS, object lock, POST
# Object). Not part of the test suite: s3-tests is not vendored here (see README.md).
#
#   tools/s3tests/run.sh S3TESTS_DIR            the access-control areas (~180 tests, ~2 min)
#   tools/s3tests/run.sh S3TESTS_DIR full       every test of test_s3.py
#
# STRATA_BIN: the gateway to run (default build/asan/bin/strata). It gets a fresh data
# directory and tools/s3tests/strata.toml on 127.0.0.1:19781, and is stopped at the end.
# Results: build/s3tests/results-<set>.{txt,xml}, summary-<set>.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ $# -lt 1 || ! -f "$1/s3tests_boto3/functional/test_s3.py" ]]; then
  echo "usage: tools/s3tests/run.sh S3TESTS_DIR [full]   (a checkout of ceph/s3-tests)" >&2
  exit 2
fi
suite="$(cd "$1" && pwd)"
set_name="${2:-areas}"
bin="${STRATA_BIN:-$root/build/asan/bin/strata}"
out="$root/build/s3tests"
work="$(mktemp -d)"
mkdir -p "$out"
sed "s|@DATA@|$work/data|g" "$here/strata.toml" > "$work/strata.toml"

ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" "$bin" --config "$work/strata.toml" \
  > "$out/strata-$set_name.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  if (echo > /dev/tcp/127.0.0.1/19781) 2>/dev/null; then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "strata did not start: $out/strata-$set_name.log" >&2; exit 1; }
  sleep 0.1
done

args=(-p no:cacheprovider -rfE -v --junitxml="$out/results-$set_name.xml")
if [[ "$set_name" != full ]]; then
  args+=(-k "policy or acl or public_access or public_block or block_public or ignore_public \
or ownership or cors or object_lock or retention or legal_hold or post_object")
fi
# PYTHON (default python3): its own boto3 first, then pytest, munch, isodate and pytz from
# Debian's dist-packages, appended last as tests/e2e/run_pytest.py does.
status=0
(cd "$suite" && S3TEST_CONF="$here/s3tests.conf" PYTHONPATH="$here/shim" timeout 3600 \
  "${PYTHON:-python3}" -c 'import sys; sys.path.append("/usr/lib/python3/dist-packages"); \
import pytest; sys.exit(pytest.main(sys.argv[1:]))' \
  "${args[@]}" s3tests_boto3/functional/test_s3.py) > "$out/results-$set_name.txt" 2>&1 \
  || status=$?
tail -1 "$out/results-$set_name.txt"
python3 "$here/analyze.py" "$out/results-$set_name.xml" 20 | tee "$out/summary-$set_name.txt"
# pytest's 1 is "some tests failed", the measurement itself; anything else is a broken run.
[[ $status -le 1 ]]
