#!/usr/bin/env bash
# strata's benchmark: builds Release (strata, strata-bench), installs the baselines (nginx,
# wrk, fio, perf) if missing, then runs tools/bench/run.py, which starts strata and nginx
# on loopback, runs every workload and writes <out>/bench-<date>.{md,json}.
#
#   tools/bench/run.sh [--quick] [--profile] [--out DIR] [--keep]
#
# A full run takes about 15 minutes, --quick about 3. See tools/bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

scripts/deps.sh --bench
scripts/build.sh Release --target strata strata-bench >&2

# run.py owns the servers it starts; forward a Ctrl-C or TERM to it and wait, so it can
# stop them and remove its work directory.
python3 tools/bench/run.py "$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true; wait "$child" || true' INT TERM
wait "$child"
