#!/bin/bash
# One real device at rest with N conversations on a relay (issue #19: "relayd and daemon RSS
# and idle CPU with 1,000 identities", "connections held at rest"), release builds: a real
# `sotto daemon` with SOTTO_RELAY makes N conversations through its CLI (new, invite, revoke:
# each identity given out, none kept awake by an invite), then on that same group directory
# sotto-relayd of BASELINE_REV (default 2ccde89: every identity holds its connection) and
# today's sotto-relayd run one after the other, each measured after its start settled:
# relayd's RSS, threads and CPU over IDLE seconds, the daemon's RSS and CPU over the same
# seconds, and the connections the relay holds for the device (`/varz`).
# Goals: relayd <= 32 MB and <= 0.5 % of a core; the daemon idle.
# Usage: Benchmarks/device-at-rest-bench.sh [BASELINE_REV] [N] [IDLE_SECONDS]   (2ccde89 1000 60)
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=${1:-2ccde89}; count=${2:-1000}; idle=${3:-60}
[ -x /usr/sbin/nats-server ] || { echo "nats-server not installed (make deps)"; exit 0; }
ulimit -n "$(ulimit -Hn)"
bin=$(./Benchmarks/build-release.sh sotto sotto-notify sotto-relayd)
base=$(./Benchmarks/baseline-relayd.sh "$base_rev")
echo "baseline: sotto-relayd of $base_rev; current: $(git rev-parse --short=12 HEAD)$(git diff --quiet || echo ' + uncommitted'); $count conversations"

. ./Benchmarks/proc-figures.sh

dir=$(mktemp -d /tmp/sotto-device-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -m 700 -p "$dir/group" "$dir/run" "$dir/js"
port=$(free_port); mport=$(free_port)
/usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -m "$mport" -sd "$dir/js" >"$dir/nats.log" 2>&1 &
until grep -q "Server is ready" "$dir/nats.log"; do sleep 0.1; done
export SOTTO_GROUP_DIR="$dir/group" SOTTO_RUNTIME_DIR="$dir/run" SOTTO_RELAY="nats://127.0.0.1:$port" SOTTO_KEY_STORE=file
"$bin/sotto" daemon >"$dir/daemon.log" 2>&1 &
daemon=$!
until "$bin/sotto" status >/dev/null 2>&1; do kill -0 "$daemon" || { cat "$dir/daemon.log"; exit 1; }; sleep 0.1; done

started=$(date +%s.%N)
for i in $(seq 1 "$count"); do
    id=$("$bin/sotto" new --name "c$i" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["conversationId"])')
    code=$("$bin/sotto" invite "$id" --expires 1h --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["code"])')
    "$bin/sotto" revoke "$id" "$code" >/dev/null
done
printf 'made %d conversations in %.0f s; the daemon marks %d inboxes awake\n' "$count" \
    "$(echo "$(date +%s.%N) - $started" | bc)" "$(ls "$dir/group/awake-mailboxes" | wc -l)"

# LABEL RELAYD -> one line: relayd started on the device's group, settled, then IDLE seconds.
at_rest() {
    local label=$1 relayd_bin=$2 relayd d0 d1 r0 r1
    "$relayd_bin" 2>"$dir/relayd-$label.log" &
    relayd=$!
    until grep -q "mailboxes open" "$dir/relayd-$label.log"; do kill -0 "$relayd" || exit 1; sleep 0.1; done
    # Settled: relayd's CPU flat for 2 s (its start drains every mailbox once).
    r0=$(cpu_ticks "$relayd"); sleep 2; r1=$(cpu_ticks "$relayd")
    while [ $((r1 - r0)) -gt 2 ]; do r0=$r1; sleep 2; r1=$(cpu_ticks "$relayd"); done
    r0=$(cpu_ticks "$relayd"); d0=$(cpu_ticks "$daemon")
    sleep "$idle"
    r1=$(cpu_ticks "$relayd"); d1=$(cpu_ticks "$daemon")
    printf '%-9s relayd: RSS %5.1f MB, %4d threads, idle CPU %.3f%% of a core; daemon: RSS %5.1f MB, idle CPU %.3f%%; relay connections held %4d\n' \
        "$label" "$(echo "$(rss_kb "$relayd")/1024" | bc -l)" "$(awk '/Threads/ {print $2}' "/proc/$relayd/status")" \
        "$(echo "($r1 - $r0) * 1000 / $tick / ($idle * 10)" | bc -l)" "$(echo "$(rss_kb "$daemon")/1024" | bc -l)" \
        "$(echo "($d1 - $d0) * 1000 / $tick / ($idle * 10)" | bc -l)" "$(varz "$mport" connections)"
    kill "$relayd"; wait "$relayd" 2>/dev/null || true
}
at_rest baseline "$base/sotto-relayd"
at_rest current "$bin/sotto-relayd"
