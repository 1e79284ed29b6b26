#!/bin/sh
# Builds release and runs the worker benchmark (issue #4): sotto-notify beside a C baseline
# doing the same durable insert and a bare C acker, in one run. Usage: worker-bench.sh [PUSHES]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify WorkerBench)
cc -O2 -o "$bin/worker-baseline" Benchmarks/WorkerBench/baseline.c -lsqlite3
cc -O2 -o "$bin/worker-acker" Benchmarks/WorkerBench/acker.c
exec "$bin/WorkerBench" "$bin/sotto-notify" "$bin/worker-baseline" "$bin/worker-acker" "${1:-200}"
