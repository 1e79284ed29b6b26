#!/usr/bin/env bash
# The daemon's end-to-end figures from release builds of the real binaries (issue #5):
#  - rebalance over 10,000 inboxes in a real database with 10,000 and 1,000,000 messages
#    (`DaemonBench --database-only`);
#  - worker ack → subscriber change latency, newConversation hit/miss round trips
#    (DaemonE2EBench, which starts `sotto daemon` and runs `sotto-notify` per push).
# Usage: Benchmarks/daemon-e2e-bench.sh   (SOTTO_BENCH_PUSHES=N to change the push count)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-notify DaemonBench DaemonE2EBench)
"$bin/DaemonBench" --database-only
"$bin/DaemonE2EBench"
