#!/bin/sh
# `sotto chat`'s end-to-end figures from release builds of the real binaries (issue #34):
#  - a push acked by the worker → drawn in the open chat, against the same push → printed
#    by `sotto watch` (both at once, each under `script`): p99 ratio, goal ≤ 2;
#  - the chat idle for 10 s: CPU ticks, goal ≤ 1.
# Usage: Benchmarks/chat-e2e-bench.sh   (SOTTO_BENCH_PUSHES=N to change the push count)
set -eu
cd "$(dirname "$0")/.."
# `sotto daemon` runs the sotto-daemon beside it: built here too, or a stale one would be measured.
bin=$(./Benchmarks/build-release.sh sotto sotto-daemon sotto-notify ChatE2EBench)
"$bin/ChatE2EBench"
