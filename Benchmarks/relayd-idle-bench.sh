#!/bin/bash
# sotto-relayd at rest (issue #12): idle RSS and CPU with N identities (default 1 and 1000),
# each with its durable consumer and mailbox watch on a real nats-server -js on loopback.
# relayd reads only the keystore's file names, so the identities are empty files named
# <clientId>.identity. CPU is utime+stime from /proc/PID/stat over an idle window after
# every consumer is open. Usage: Benchmarks/relayd-idle-bench.sh [IDLE_SECONDS] [COUNTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
idle=${1:-30}; shift || true
counts=("${@:-1 1000}")
[ -x /usr/sbin/nats-server ] || { echo "nats-server not installed (make deps)"; exit 0; }
bin=$(./Benchmarks/build-release.sh sotto-relayd)
tick=$(getconf CLK_TCK)
for count in ${counts[@]}; do
    dir=$(mktemp -d /tmp/sotto-relayd-bench.XXXXXX)
    mkdir -m 700 -p "$dir/group/keystore" "$dir/run" "$dir/js"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    /usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -sd "$dir/js" >"$dir/nats.log" 2>&1 &
    nats=$!
    until grep -q "Server is ready" "$dir/nats.log"; do sleep 0.1; done
    for i in $(seq 1 "$count"); do : >"$dir/group/keystore/$(cat /proc/sys/kernel/random/uuid).identity"; done
    SOTTO_GROUP_DIR="$dir/group" SOTTO_RUNTIME_DIR="$dir/run" SOTTO_RELAY="nats://127.0.0.1:$port" \
        "$bin/sotto-relayd" 2>"$dir/relayd.log" &
    relayd=$!
    start=$(date +%s.%N)
    until grep -q "all $count mailboxes open" "$dir/relayd.log"; do sleep 0.1; done
    ready=$(date +%s.%N)
    sleep 2  # the first (empty) drain of every mailbox follows
    read -r u0 s0 < <(awk '{print $14, $15}' /proc/$relayd/stat)
    sleep "$idle"
    read -r u1 s1 < <(awk '{print $14, $15}' /proc/$relayd/stat)
    rss=$(awk '/VmRSS/ {print $2}' /proc/$relayd/status)
    hwm=$(awk '/VmHWM/ {print $2}' /proc/$relayd/status)
    threads=$(awk '/Threads/ {print $2}' /proc/$relayd/status)
    cpu_ms=$(( (u1 + s1 - u0 - s0) * 1000 / tick ))
    printf 'RELAYD idle: %5d identities: open in %.1f s, RSS %.1f MB (peak %.1f MB), %d threads, CPU %d ms over %d s idle (%.3f%%)\n' \
        "$count" "$(echo "$ready - $start" | bc)" "$(echo "$rss/1024" | bc -l)" "$(echo "$hwm/1024" | bc -l)" \
        "$threads" "$cpu_ms" "$idle" "$(echo "$cpu_ms / ($idle * 10)" | bc -l)"
    kill "$relayd" "$nats"; wait "$relayd" "$nats" 2>/dev/null || true
    rm -rf "$dir"
done
