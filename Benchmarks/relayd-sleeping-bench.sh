#!/bin/bash
# Sleeping inboxes off the relay (issue #19 goals 1 and 6, docs/adr/0056), against the
# relayd of BASELINE_REV (default: the commit before the awake marks, where every identity
# holds a connection) measured in the same run:
#  1. sotto-relayd at rest with N identities of which 20 are marked awake (default 1000):
#     RSS, threads, connections the relay holds for the device (`/varz`), the relay's RSS
#     growth, the CPU and connections of relayd's start (every sleeping mailbox's first
#     drain), and idle CPU over IDLE seconds; then relayd with its drains at their cap
#     (2 a second) in steady state: drains per second and CPU;
#  2. how long a push waits on the relay: RelaySleepingBench publishes one push to each of
#     60 sleeping and 20 awake mailboxes at random moments and times each until the real
#     worker stored it (p50, p99, max), with the bound BOUND_MS (default 60000).
# Usage: Benchmarks/relayd-sleeping-bench.sh [BASELINE_REV] [IDLE_SECONDS] [BOUND_MS] [COUNTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=${1:-2ccde89}; idle=${2:-60}; bound=${3:-60000}
shift 3 2>/dev/null || shift $#
counts=("${@:-1000}")
[ -x /usr/sbin/nats-server ] || { echo "nats-server not installed (make deps)"; exit 0; }
ulimit -n "$(ulimit -Hn)"
bin=$(./Benchmarks/build-release.sh sotto-notify sotto-relayd RelaySleepingBench)
sha=$(git rev-parse --short=12 "$base_rev")
base=$(./Benchmarks/baseline-relayd.sh "$base_rev")
echo "baseline: sotto-relayd of $base_rev ($sha); current: $(git rev-parse --short=12 HEAD)$(git diff --quiet || echo ' + uncommitted'); bound $bound ms"

. ./Benchmarks/proc-figures.sh
# LABEL RELAYD COUNT WARM WINDOW [ARGUMENTS...] -> one line. After relayd's start and WARM
# seconds, over WINDOW seconds: relayd's CPU, and the connections the relay saw opened
# (`total_connections`: each sleeping drain is one). Also the CPU and connections of the
# start itself (every sleeping mailbox's first drain comes within 5 s of it).
at_rest() {
    local label=$1 relayd_bin=$2 count=$3 warm=$4 window=$5 dir port mport nats relayd c0 c1 c2 t0 t1 t2 nats0 nats1
    shift 5
    dir=$(mktemp -d /tmp/sotto-sleeping-bench.XXXXXX)
    mkdir -m 700 -p "$dir/group/keystore" "$dir/group/awake-mailboxes" "$dir/run" "$dir/js"
    port=$(free_port); mport=$(free_port)
    /usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -m "$mport" -sd "$dir/js" >"$dir/nats.log" 2>&1 &
    nats=$!
    until grep -q "Server is ready" "$dir/nats.log"; do sleep 0.1; done
    nats0=$(rss_kb "$nats")
    for i in $(seq 1 "$count"); do
        id=$(cat /proc/sys/kernel/random/uuid)
        : >"$dir/group/keystore/$id.identity"
        if [ "$i" -le 20 ]; then : >"$dir/group/awake-mailboxes/$id"; fi
    done
    t0=$(varz "$mport" total_connections)
    SOTTO_GROUP_DIR="$dir/group" SOTTO_RUNTIME_DIR="$dir/run" SOTTO_RELAY="nats://127.0.0.1:$port" \
        "$relayd_bin" "$@" 2>"$dir/relayd.log" &
    relayd=$!
    until grep -q "mailboxes open" "$dir/relayd.log"; do sleep 0.1; done
    sleep 8
    c0=$(cpu_ticks "$relayd"); t1=$(varz "$mport" total_connections)
    sleep $((warm > 8 ? warm - 8 : 0))
    c1=$(cpu_ticks "$relayd"); t1w=$(varz "$mport" total_connections); n1=$(cpu_ticks "$nats")
    sleep "$window"
    c2=$(cpu_ticks "$relayd"); t2=$(varz "$mport" total_connections); n2=$(cpu_ticks "$nats")
    nats1=$(rss_kb "$nats")
    printf '%-9s %5d identities (20 awake): RSS %5.1f MB, %4d threads, relay connections %4d, relay RSS +%.1f MB; start: %d connections, %d ms CPU; then %d s from %d s: %d connections (%.2f/s), CPU %.3f%% of a core (nats-server %.3f%%)\n' \
        "$label" "$count" "$(echo "$(rss_kb "$relayd")/1024" | bc -l)" "$(awk '/Threads/ {print $2}' "/proc/$relayd/status")" \
        "$(varz "$mport" connections)" "$(echo "($nats1 - $nats0)/1024" | bc -l)" \
        "$((t1 - t0))" "$((c0 * 1000 / tick))" "$window" "$warm" "$((t2 - t1w))" "$(echo "($t2 - $t1w) / $window" | bc -l)" \
        "$(echo "($c2 - $c1) * 1000 / $tick / ($window * 10)" | bc -l)" "$(echo "($n2 - $n1) * 1000 / $tick / ($window * 10)" | bc -l)"
    kill "$relayd" "$nats"; wait "$relayd" "$nats" 2>/dev/null || true
    rm -rf "$dir"
}
for count in ${counts[@]}; do
    at_rest baseline "$base/sotto-relayd" "$count" 8 "$idle"
    at_rest current "$bin/sotto-relayd" "$count" 8 "$idle" --sleeping-drain-ms "$bound"
done
# Steady drains at relayd's cap (2 a second): 100 identities, 80 asleep, a 20 s bound, which the
# cap stretches to 54 s; measured after the first period.
at_rest baseline "$base/sotto-relayd" 100 60 "$idle"
at_rest steady "$bin/sotto-relayd" 100 60 "$idle" --sleeping-drain-ms 20000
"$bin/RelaySleepingBench" "$bin" "$base/sotto-relayd" "$bound"
