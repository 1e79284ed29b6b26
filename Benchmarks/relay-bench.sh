#!/bin/sh
# Release builds, then the relay benchmarks (issue #12): catch-up through the relay beside the
# direct push.sock path (RelayBench: 10,000 pushes by default; docs/adr/0027), and
# sotto-relayd's idle RSS/CPU with 1 and 1,000 identities. Usage: relay-bench.sh [PUSHES] [IDLE_SECONDS]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify sotto-relayd RelayBench)
"$bin/RelayBench" "$bin" "${1:-10000}"
./Benchmarks/relayd-idle-bench.sh "${2:-30}" 1 1000
