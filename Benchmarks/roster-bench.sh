#!/bin/sh
# Builds release and runs the roster benchmark (issue #17 item 3): worker spawn -> ack when
# joining as the 1,000th member (the full roster by reference, applied) against joining as the
# 2nd (a roster of 2, inline), p50 and p99, in one run. Usage: roster-bench.sh [PUSHES]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify RosterBench)
exec "$bin/RosterBench" "$bin/sotto-notify" "${1:-100}"
