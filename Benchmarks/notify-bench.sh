#!/bin/sh
# Builds release and runs the notification benchmark (issue #10, defect 9a): storage speed with
# a notification server that never answers beside no session bus, then what showing one costs the
# worker (issue #22 item 4: preview full/none, handed over to the daemon). Usage: notify-bench.sh [PUSHES]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify sotto-test-notification-server NotifyBench)
exec "$bin/NotifyBench" "$bin/sotto-notify" "${1:-100}"
