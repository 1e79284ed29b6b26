#!/bin/bash
# Builds sotto-relayd of REV in release (once; cached in $SOTTO_COMPARE_DIR, default
# /tmp/sotto-compare/<sha>-relayd) and prints the directory that holds it: the baseline of the
# relay benchmarks. Usage: dir=$(Benchmarks/baseline-relayd.sh REV)
set -euo pipefail
cd "$(dirname "$0")/.."
sha=$(git rev-parse --short=12 "$1")
base="${SOTTO_COMPARE_DIR:-/tmp/sotto-compare}/$sha-relayd"
if [ ! -x "$base/sotto-relayd" ]; then
    rm -rf "$base" && mkdir -p "$base/src"
    git archive "$sha" | tar -x -C "$base/src"
    (cd "$base/src" && swift build -c release --product sotto-relayd >"$base/build.log" 2>&1 \
        && cp "$(swift build -c release --show-bin-path)/sotto-relayd" "$base/sotto-relayd")
fi
echo "$base"
