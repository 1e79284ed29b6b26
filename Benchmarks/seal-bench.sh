#!/usr/bin/env bash
# Content sealed per conversation (issue #20 item 4, docs/adr/0052), before vs after in one
# run on the same machine: each revision built clean in release (compare-revisions.sh), then
#  - the worker: each revision's WorkerBench driving its own sotto-notify (each seeds the
#    database at its own schema), alternating; spawn → durable ack p50 and peak RSS, as ratios;
#  - `sotto read` of 1,000 messages: a daemon of each revision holding one conversation of
#    1,001 messages; `read --limit 1000` (the in-memory window) and `read --limit 1001` (past
#    it: 1,001 rows read from the database and, after, opened), timed from the CLI's spawn to
#    its exit, rounds alternating between the revisions; medians and ratios.
# Goals (issue #20): worker p50 ≤ 1.1x, worker peak RSS ≤ 1.1x, read ≤ 1.3x.
#
# Usage: Benchmarks/seal-bench.sh BEFORE_REV [AFTER_REV] [ROUNDS]   (AFTER_REV defaults to HEAD)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${SOTTO_COMPARE_DIR:-/tmp/sotto-compare}
before_rev=$(git rev-parse --short=12 "${1:?"usage: $0 BEFORE_REV [AFTER_REV] [ROUNDS]"}")
after_rev=$(git rev-parse --short=12 "${2:-HEAD}")
rounds=${3:-15}
./Benchmarks/compare-revisions.sh --build-only "$before_rev"
./Benchmarks/compare-revisions.sh --build-only "$after_rev"

bin_of() { (cd "$root/$1/src" && swift build -c release --show-bin-path 2>/dev/null); }
before=$(bin_of "$before_rev")
after=$(bin_of "$after_rev")
for rev in "$before_rev" "$after_rev"; do
    src="$root/$rev/src"
    bin=$(bin_of "$rev")
    (cd "$src" && swift build -c release --product WorkerBench >/dev/null 2>&1)
    cc -O2 -o "$bin/worker-baseline" "$src/Benchmarks/WorkerBench/baseline.c" -lsqlite3
    cc -O2 -o "$bin/worker-acker" "$src/Benchmarks/WorkerBench/acker.c"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { echo "scale=2; $2 / $1" | bc; }

echo "== $before_rev (before) vs $after_rev (after), $rounds rounds"

# MARK: The worker
worker_run() {  # BIN -> "p50_ms rss_kib" of its sotto-notify
    local out
    out=$(SOTTO_VECTORS=${SOTTO_VECTORS:-} "$1/WorkerBench" "$1/sotto-notify" "$1/worker-baseline" "$1/worker-acker" 200)
    echo "$out" | awk '/^sotto-notify/ { p50 = $3 } /^peak RSS/ { for (i = 1; i <= NF; i++) if ($i == "sotto-notify") rss = $(i + 1) } END { print p50, rss }'
}
declare -a wb_p50 wa_p50 wb_rss wa_rss
for run in 1 2 3; do
    read -r p r <<<"$(worker_run "$before")"; wb_p50+=("$p"); wb_rss+=("$r")
    read -r p r <<<"$(worker_run "$after")"; wa_p50+=("$p"); wa_rss+=("$r")
    echo "worker run $run: spawn→ack p50 before ${wb_p50[-1]} ms, after ${wa_p50[-1]} ms; peak RSS before ${wb_rss[-1]} KiB, after ${wa_rss[-1]} KiB"
done
bp=$(printf '%s\n' "${wb_p50[@]}" | median); ap=$(printf '%s\n' "${wa_p50[@]}" | median)
br=$(printf '%s\n' "${wb_rss[@]}" | median); ar=$(printf '%s\n' "${wa_rss[@]}" | median)
echo "worker spawn→durable ack p50 (median of runs): before $bp ms, after $ap ms, ratio $(ratio "$bp" "$ap") (goal ≤ 1.1)"
echo "worker peak RSS (median of runs): before $br KiB, after $ar KiB, ratio $(ratio "$br" "$ar") (goal ≤ 1.1)"

# MARK: sotto read
homes=()
trap 'for h in "${homes[@]}"; do [ -f "$h/pid" ] && kill -TERM "$(cat "$h/pid")" 2>/dev/null; sleep 0.5; rm -rf "$h"; done' EXIT
start_daemon() {  # BIN HOME
    SOTTO_KEY_STORE=file SOTTO_GROUP_DIR="$2/group" SOTTO_RUNTIME_DIR="$2/run" "$1/sotto" daemon >"$2/daemon.log" 2>&1 &
    echo $! >"$2/pid"
    for _ in $(seq 1 400); do
        SOTTO_GROUP_DIR="$2/group" SOTTO_RUNTIME_DIR="$2/run" "$1/sotto" status >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "daemon of $1 did not start" >&2; exit 1
}
seed() {  # BIN HOME -> the conversation id; 1,001 messages sent in it
    local bin=$1 home=$2 id
    mkdir -p "$home/group" "$home/run" && chmod 700 "$home/group" "$home/run"
    start_daemon "$bin" "$home"
    id=$(SOTTO_GROUP_DIR="$home/group" SOTTO_RUNTIME_DIR="$home/run" "$bin/sotto" new --name "Bench" --json \
        | sed -n 's/.*"conversationId" *: *"\([0-9a-f]*\)".*/\1/p')
    for i in $(seq 1 1001); do
        SOTTO_GROUP_DIR="$home/group" SOTTO_RUNTIME_DIR="$home/run" "$bin/sotto" send "$id" "message number $i of the read benchmark" >/dev/null
    done
    # A fresh start: what is in memory is what activation read (and opened) from the file.
    kill -TERM "$(cat "$home/pid")"; wait "$(cat "$home/pid")" 2>/dev/null || true
    start_daemon "$bin" "$home"
    echo "$id"
}
read_ms() {  # BIN HOME ID LIMIT -> milliseconds, spawn to exit
    local t0 t1 n
    t0=$(date +%s%N)
    n=$(SOTTO_GROUP_DIR="$2/group" SOTTO_RUNTIME_DIR="$2/run" "$1/sotto" read "$3" --limit "$4" --json | grep -o '"id"' | wc -l)
    t1=$(date +%s%N)
    [ "$n" -ge "$4" ] || { echo "read of $1 gave $n messages, not $4" >&2; exit 1; }
    echo "scale=3; ($t1 - $t0) / 1000000" | bc
}
bh=$(mktemp -d /tmp/seal-bench-before.XXXXXX); ah=$(mktemp -d /tmp/seal-bench-after.XXXXXX); homes=("$bh" "$ah")
bid=$(seed "$before" "$bh"); aid=$(seed "$after" "$ah")
for limit in 1000 1001; do
    : >"$bh/read-$limit"; : >"$ah/read-$limit"
    read_ms "$before" "$bh" "$bid" "$limit" >/dev/null; read_ms "$after" "$ah" "$aid" "$limit" >/dev/null   # warm
    for _ in $(seq 1 "$rounds"); do
        read_ms "$before" "$bh" "$bid" "$limit" >>"$bh/read-$limit"
        read_ms "$after" "$ah" "$aid" "$limit" >>"$ah/read-$limit"
    done
    b=$(median <"$bh/read-$limit"); a=$(median <"$ah/read-$limit")
    echo "sotto read --limit $limit (median of $rounds): before $b ms, after $a ms, ratio $(ratio "$b" "$a") (goal ≤ 1.3)"
done
