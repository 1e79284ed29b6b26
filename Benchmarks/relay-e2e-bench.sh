#!/bin/sh
# Relay end to end (issue #12), release builds: alice's `send` returns → bob's subscriber (the
# subscribe RPC `sotto watch` reads) sees the message, p50/p99 over N sequential sends,
# through a real nats-server relay (both devices with SOTTO_RELAY and sotto-relayd) beside the
# direct unix: push socket path in the same run, with the ratio relay/direct.
# Usage: Benchmarks/relay-e2e-bench.sh [SENDS]   (default 200)
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-notify sotto-relayd RelayE2EBench)
"$bin/RelayE2EBench" "${1:-200}"
