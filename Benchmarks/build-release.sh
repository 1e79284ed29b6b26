#!/bin/sh
# Builds the named products in release mode (the worker with static libstdc++ when make has
# prepared it, docs/adr/0001) and prints the release bin path: the one preamble of every
# benchmark script. Usage: bin=$(./Benchmarks/build-release.sh PRODUCT...)
set -eu
cd "$(dirname "$0")/.."
./scripts/prepare-static-cxx.sh >&2
for product in "$@"; do swift build -c release --product "$product" >&2; done
swift build -c release --show-bin-path
