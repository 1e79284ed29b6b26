#!/bin/sh
# Page up deep in a conversation (issue #34), release builds of the real daemon and worker:
#  - one page up with 100,000 messages behind it (the end of scrolling through all of them)
#    against one page up at message 100 of a 200-message conversation: ratio, goal ≤ 1.2;
#  - the RSS after paging through all 100,000 against the RSS with an empty conversation
#    open: ratio, goal ≤ 1.5.
# Both are measured twice: through the library object `sotto chat` pages with
# (`Timeline.loadOlder`), then through the app itself, `sotto chat` on a pseudo-terminal:
# the PageUp key written → its frame read back whole, and the app's RSS (docs/adr/0072).
# Usage: Benchmarks/page-up-bench.sh   (SOTTO_BENCH_MESSAGES=N, SOTTO_BENCH_ROUNDS=N;
# SOTTO_BENCH_THROUGH=library|app|both (both); SOTTO_BENCH_BEFORE=1 adds a timeline holding
# every page, as before docs/adr/0069)
set -eu
cd "$(dirname "$0")/.."
bin=$(./Benchmarks/build-release.sh sotto sotto-daemon sotto-notify PageUpBench)
"$bin/PageUpBench"
