#!/usr/bin/env bash
# Builds the daemon in release and runs its in-memory benchmarks (conversation store append,
# inbox rebalance, unused-inbox consume). Usage: Benchmarks/daemon-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product sotto
"$(swift build -c release --show-bin-path)/sotto" benchmark
