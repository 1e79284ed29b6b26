#!/bin/sh
# Builds release and runs the worker benchmark with no daemon and no held connection (issue #10):
# sequential pushes through the real sotto-notify, p50/p99 and CPU of the first and last 500, their
# ratio and the WAL curve, with the WAL reset off (the old behaviour), every push, and above 1 MiB.
# Usage: worker-alone-bench.sh [PUSHES]   (default 3000)
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify WorkerBench)
exec "$bin/WorkerBench" --alone "$bin/sotto-notify" "${1:-3000}"
