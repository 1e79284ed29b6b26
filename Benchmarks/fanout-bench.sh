#!/bin/sh
# Builds release and runs the fan-out benchmark (issue #17, docs/adr/0037): one daemon sends to
# MEMBERS members through a real nats-server (send → all relayed, against one member in the
# same run), the bytes the relay stores for one 64 KiB text to them all, and the same fan-out
# to direct endpoints that ack at once. Usage: fanout-bench.sh [MEMBERS] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto FanoutBench)
exec "$bin/FanoutBench" "${1:-1000}" "${2:-5}"
