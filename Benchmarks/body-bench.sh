#!/bin/sh
# Builds release and runs the bodies-by-reference benchmark (issue #17): worker spawn→ack for
# a push by reference vs inline with the same text, peak RSS with the largest body, and what
# a relay stores for one 64 KiB message to N members. Usage: body-bench.sh [PUSHES] [MEMBERS]
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto-notify BodyBench)
exec "$bin/BodyBench" "$bin/sotto-notify" "${1:-200}" "${2:-1000}"
