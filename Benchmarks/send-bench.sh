#!/bin/sh
# Builds release and runs the sending daemon's bodies-by-reference benchmark (issue #17,
# docs/adr/0032): sendMessage → all N direct members acked, a 64 KiB text by reference vs a
# short text in the same run, to real workers and to endpoints that ack at once.
# Usage: send-bench.sh [MEMBERS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-notify SendBench)
exec "$bin/SendBench" "$bin/sotto-notify" "${1:-10}" "${2:-20}"
