#!/bin/bash
# One relay connection per identity (issue #19, docs/adr/0044), against today's design (one
# shared connection) measured in the same run: the baseline is sotto-relayd built in release
# from BASELINE_REV (default main; cached in /tmp/sotto-compare/<sha>-relayd).
#  1. catch-up: 10,000 valid pushes over 20 mailboxes of one device into the real worker
#     (RelayPrivacyBench; goal >= 2,000/s);
#  2. sotto-relayd at rest with N identities (default 100 and 1000): time to open them all,
#     RSS, threads, idle CPU, connections the relay holds for it (`/connz`), and the relay's
#     own RSS growth;
#  3. nats-server's RSS per idle client connection (CONN idle connections on loopback, each a
#     CONNECT and a PING, like a connection that holds one mailbox watch).
# Usage: Benchmarks/relay-privacy-bench.sh [BASELINE_REV] [IDLE_SECONDS] [CONN] [COUNTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=${1:-main}; idle=${2:-20}; conns=${3:-1000}
shift 3 2>/dev/null || shift $#
counts=("${@:-100 1000}")
[ -x /usr/sbin/nats-server ] || { echo "nats-server not installed (make deps)"; exit 0; }
ulimit -n "$(ulimit -Hn)"
bin=$(./Benchmarks/build-release.sh sotto-notify sotto-relayd RelayPrivacyBench)
sha=$(git rev-parse --short=12 "$base_rev")
base=$(./Benchmarks/baseline-relayd.sh "$base_rev")
echo "baseline: sotto-relayd of $base_rev ($sha); current: $(git rev-parse --short=12 HEAD)$(git diff --quiet || echo ' + uncommitted')"

# A baseline that already reads padded frames (docs/adr/0044) is given padded pushes.
padded=""; git cat-file -e "$base_rev:Sources/RelayTransport/RelayPadding.swift" 2>/dev/null && padded=padded
"$bin/RelayPrivacyBench" "$bin" "$base/sotto-relayd" 10000 20 2 $padded

. ./Benchmarks/proc-figures.sh
at_rest() {  # LABEL RELAYD COUNT -> one line
    local label=$1 relayd_bin=$2 count=$3 dir port mport nats relayd start ready u0 s0 u1 s1 nats0 nats1 conns_held
    dir=$(mktemp -d /tmp/sotto-privacy-bench.XXXXXX)
    mkdir -m 700 -p "$dir/group/keystore" "$dir/run" "$dir/js"
    port=$(free_port); mport=$(free_port)
    /usr/sbin/nats-server -js -a 127.0.0.1 -p "$port" -m "$mport" -sd "$dir/js" >"$dir/nats.log" 2>&1 &
    nats=$!
    until grep -q "Server is ready" "$dir/nats.log"; do sleep 0.1; done
    nats0=$(rss_kb "$nats")
    for _ in $(seq 1 "$count"); do : >"$dir/group/keystore/$(cat /proc/sys/kernel/random/uuid).identity"; done
    SOTTO_GROUP_DIR="$dir/group" SOTTO_RUNTIME_DIR="$dir/run" SOTTO_RELAY="nats://127.0.0.1:$port" \
        "$relayd_bin" 2>"$dir/relayd.log" &
    relayd=$!
    start=$(date +%s.%N)
    until grep -q "all $count mailboxes open" "$dir/relayd.log"; do sleep 0.1; done
    ready=$(date +%s.%N)
    sleep 2  # the first (empty) drain of every mailbox follows
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$relayd/stat")
    sleep "$idle"
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$relayd/stat")
    conns_held=$(curl -s "http://127.0.0.1:$mport/varz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["connections"])')
    nats1=$(rss_kb "$nats")
    printf '%-9s %5d identities: open in %5.1f s, RSS %6.1f MB, %5d threads, idle CPU %.3f%% of a core, relay connections %5d, relay RSS +%.1f MB\n' \
        "$label" "$count" "$(echo "$ready - $start" | bc)" "$(echo "$(rss_kb "$relayd")/1024" | bc -l)" \
        "$(awk '/Threads/ {print $2}' "/proc/$relayd/status")" \
        "$(echo "($u1 + $s1 - $u0 - $s0) * 1000 / $tick / ($idle * 10)" | bc -l)" "$conns_held" \
        "$(echo "($nats1 - $nats0)/1024" | bc -l)"
    kill "$relayd" "$nats"; wait "$relayd" "$nats" 2>/dev/null || true
    rm -rf "$dir"
}
for count in ${counts[@]}; do
    at_rest baseline "$base/sotto-relayd" "$count"
    at_rest current "$bin/sotto-relayd" "$count"
done

# nats-server per idle connection.
dir=$(mktemp -d /tmp/sotto-privacy-bench.XXXXXX)
port=$(free_port)
/usr/sbin/nats-server -a 127.0.0.1 -p "$port" >"$dir/nats.log" 2>&1 &
nats=$!
until grep -q "Server is ready" "$dir/nats.log"; do sleep 0.1; done
python3 - "$port" "$conns" "$nats" <<'PY'
import socket, sys, time
port, count, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def rss():
    return next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS"))
def cpu():
    f = open(f"/proc/{pid}/stat").read().split(")")[1].split()
    return int(f[11]) + int(f[12])
before = rss()
socks = []
for i in range(count):
    s = socket.create_connection(("127.0.0.1", port)); s.recv(4096)
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"lang":"c","version":"3.4.1","protocol":1}\r\nSUB sotto.mb.%d 1\r\nPING\r\n' % i)
    socks.append(s)
for s in socks: s.recv(64)
time.sleep(3)
after = rss(); c0 = cpu(); time.sleep(10); c1 = cpu()
tick = 100
print(f"NATS-SERVER {count} idle connections (one SUB each): RSS +{(after-before)/1024:.1f} MB, "
      f"{(after-before)/count:.1f} KB per connection; idle CPU {(c1-c0)/tick/10*100:.3f}% of a core")
for s in socks: s.close()
PY
kill "$nats"; wait "$nats" 2>/dev/null || true
rm -rf "$dir"
