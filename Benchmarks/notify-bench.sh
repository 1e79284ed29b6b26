#!/bin/sh
# Builds release and runs the notification benchmark (issue #10, defect 9a): storage speed with
# a notification server that never answers beside no session bus. Usage: notify-bench.sh [PUSHES]
set -eu
cd "$(dirname "$0")/.."
./scripts/prepare-static-cxx.sh
swift build -c release --product sotto-notify
swift build -c release --product NotifyBench
bin=$(swift build -c release --show-bin-path)
exec "$bin/NotifyBench" "$bin/sotto-notify" "${1:-100}"
