#!/bin/sh
# Builds release and runs the notification benchmark (issue #10, defect 9a): storage speed with
# a notification server that never answers beside no session bus. Usage: notify-bench.sh [PUSHES]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify NotifyBench)
exec "$bin/NotifyBench" "$bin/sotto-notify" "${1:-100}"
