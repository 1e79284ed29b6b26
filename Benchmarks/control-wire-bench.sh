#!/bin/bash
# The control wire's parse and write cost per request and reply: JSONSerialization (before),
# SottoWire's JSON with the wire types (now), Codable (the alternative). docs/adr/0021.
#   Benchmarks/control-wire-bench.sh [iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product ControlWireBench >/dev/null
.build/release/ControlWireBench "$@"
