#!/bin/sh
# Builds release and runs the keyring benchmark (issue #20, docs/adr/0045): the worker's
# spawn→durable-ack latency and peak RSS with the master key from the kernel keyring beside
# the key file, alternating in one run. Usage: keyring-bench.sh [PUSHES]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify WorkerBench)
exec "$bin/WorkerBench" --keyring "$bin/sotto-notify" "${1:-200}"
