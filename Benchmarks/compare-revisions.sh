#!/usr/bin/env bash
# Before/after figures of two revisions in one run (docs/adr/0023): each revision is exported
# into its own directory and built clean in release (timed), then the script prints the
# binaries' sizes, the daemon's RSS after start, and runs DaemonBench and DaemonE2EBench of
# both, alternating, on the same machine in the same minutes; last, the after revision's
# WorkerBench drives both revisions' `sotto-notify` (the worker must not get slower).
#
# Usage: Benchmarks/compare-revisions.sh BEFORE_REV [AFTER_REV]   (AFTER_REV defaults to HEAD)
#        Benchmarks/compare-revisions.sh --build-only REV           (prepare one revision)
# A revision already built (its build.seconds exists) is not built again: its build time is
# the one measured when it was.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${SOTTO_COMPARE_DIR:-/tmp/sotto-compare}
products=(sotto sotto-notify DaemonBench DaemonE2EBench)

build() {  # REV -> prints the directory holding the release binaries
    local rev=$1 sha dir
    sha=$(git rev-parse --short=12 "$rev")
    dir="$root/$sha"
    if [ ! -f "$dir/build.seconds" ]; then
        rm -rf "$dir" && mkdir -p "$dir/src"
        git archive "$sha" | tar -x -C "$dir/src"
        [ -e "$dir/shared" ] || ln -s /work/shared "$dir/shared" 2>/dev/null || true
        local start end
        start=$(date +%s.%N)
        (cd "$dir/src" && ./Benchmarks/build-release.sh "${products[@]}" >"$dir/build.log" 2>&1)
        end=$(date +%s.%N)
        echo "$end - $start" | bc >"$dir/build.seconds"
    fi
    (cd "$dir/src" && swift build -c release --show-bin-path 2>/dev/null)
}

rss_after_start() {  # BIN -> the daemon's VmRSS (kB) once it answers `status`
    local bin=$1 home pid rss
    home=$(mktemp -d /tmp/sotto-rss.XXXXXX)
    mkdir -p "$home/group" "$home/run" && chmod 700 "$home/group" "$home/run"
    SOTTO_KEY_STORE=file SOTTO_GROUP_DIR="$home/group" SOTTO_RUNTIME_DIR="$home/run" "$bin/sotto" daemon >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 200); do
        SOTTO_GROUP_DIR="$home/group" SOTTO_RUNTIME_DIR="$home/run" "$bin/sotto" status >/dev/null 2>&1 && break
        sleep 0.05
    done
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    kill -TERM "$pid" && wait "$pid" 2>/dev/null || true
    rm -rf "$home"
    echo "$rss"
}

if [ "${1:-}" = "--build-only" ]; then
    build "${2:?revision}" >/dev/null
    exit 0
fi

before_rev=$(git rev-parse --short=12 "${1:?"usage: $0 BEFORE_REV [AFTER_REV]"}")
after_rev=$(git rev-parse --short=12 "${2:-HEAD}")
before=$(build "$before_rev")
after=$(build "$after_rev")
before_dir="$root/$before_rev"
after_dir="$root/$after_rev"

echo "== $before_rev (before) vs $after_rev (after)"
printf '%-34s %14s %14s\n' "" before after
printf '%-34s %14s %14s\n' "clean release build (s)" "$(cat "$before_dir/build.seconds")" "$(cat "$after_dir/build.seconds")"
for product in sotto sotto-notify; do
    printf '%-34s %14s %14s\n' "$product size (bytes)" "$(stat -c %s "$before/$product")" "$(stat -c %s "$after/$product")"
done
for run in 1 2 3; do
    printf '%-34s %14s %14s\n' "daemon RSS after start (kB) #$run" "$(rss_after_start "$before")" "$(rss_after_start "$after")"
done
for run in 1 2; do
    echo "== DaemonBench --database-only, before, run $run"; "$before/DaemonBench" --database-only
    echo "== DaemonBench --database-only, after, run $run"; "$after/DaemonBench" --database-only
done
echo "== DaemonE2EBench, before"; "$before/DaemonE2EBench"
echo "== DaemonE2EBench, after"; "$after/DaemonE2EBench"
# The worker benchmark's harness from the after tree (built after the timed build), driving each worker.
(cd "$after_dir/src" && swift build -c release --product WorkerBench >/dev/null 2>&1)
cc -O2 -o "$after/worker-baseline" "$after_dir/src/Benchmarks/WorkerBench/baseline.c" -lsqlite3
cc -O2 -o "$after/worker-acker" "$after_dir/src/Benchmarks/WorkerBench/acker.c"
for run in 1 2; do
    echo "== WorkerBench, before's sotto-notify, run $run"; "$after/WorkerBench" "$before/sotto-notify" "$after/worker-baseline" "$after/worker-acker" 200
    echo "== WorkerBench, after's sotto-notify, run $run"; "$after/WorkerBench" "$after/sotto-notify" "$after/worker-baseline" "$after/worker-acker" 200
done
