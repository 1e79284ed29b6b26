#!/bin/sh
# Builds release and runs the fan-out benchmark (issue #17, docs/adr/0041): one daemon sends to
# MEMBERS members through a real nats-server (send → all relayed, against one member in the
# same run), the bytes the relay stores for one 64 KiB text to them all, and the same fan-out
# to direct endpoints that ack at once.
# Usage: fanout-bench.sh [MEMBERS] [ROUNDS] [BEFORE_DIR]
# BEFORE_DIR: a directory holding the release `sotto` of an earlier revision; the benchmark
# then runs against it first and against this revision's right after, in the same run.
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto FanoutBench)
members=${1:-1000}
rounds=${2:-5}
if [ -n "${3:-}" ]; then
    cp "$bin/FanoutBench" "$3/FanoutBench"   # it runs the `sotto` beside it
    echo "### before: $3/sotto"
    "$3/FanoutBench" "$members" "$rounds"
    echo "### after: $bin/sotto"
fi
exec "$bin/FanoutBench" "$members" "$rounds"
