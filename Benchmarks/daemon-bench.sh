#!/usr/bin/env bash
# Builds the daemon benchmarks in release and runs them (conversation store append, inbox
# rebalance, unused-inbox consume, rebalance on a real database). Usage: Benchmarks/daemon-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh DaemonBench)
"$bin/DaemonBench" "$@"
