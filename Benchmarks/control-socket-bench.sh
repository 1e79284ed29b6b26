#!/usr/bin/env bash
# The control socket's cost, two `sotto` binaries side by side in one run (issue #11, docs/adr/0025):
# idle RSS, threads and CPU ticks over 8 s (docs/adr/0011: ≤ 3), and `status` round trips
# (2,000 on one connection; 200 each on a new connection), with the after/before ratio.
# The two daemons take turns, three rounds each (SOTTO_BENCH_ROUNDS), and each figure is the
# median of its rounds, so that load from elsewhere on the machine falls on both.
# Usage: Benchmarks/control-socket-bench.sh BEFORE_SOTTO AFTER_SOTTO
#        (e.g. a copy of `sotto` built from main, and .build/release/sotto)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BEFORE_SOTTO AFTER_SOTTO" >&2; exit 64; }
exec python3 - "$1" "$2" <<'PY'
import json, os, socket, statistics, subprocess, sys, tempfile, time

def start(binary):
    home = tempfile.mkdtemp(prefix="sotto-control-bench-")
    env = dict(os.environ, SOTTO_KEY_STORE="file", SOTTO_GROUP_DIR=home + "/group", SOTTO_RUNTIME_DIR=home + "/run")
    for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID"):
        env.pop(name, None)
    log = open(home + "/daemon.log", "w")
    process = subprocess.Popen([binary, "daemon"], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    path = home + "/run/control.sock"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            Client(path).call("status")
            return process, path
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{binary}: daemon did not start; see {home}/daemon.log")

class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1
    def call(self, method):
        self.sock.sendall(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method}).encode() + b"\n")
        self.next_id += 1
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk: raise OSError("closed")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)
    def close(self): self.sock.close()

def usage(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status") if ":" in line)
    return int(fields[11]) + int(fields[12]), int(status["VmRSS"].split()[0]), int(status["Threads"])

def measure(binary):
    process, path = start(binary)
    try:
        time.sleep(3)  # start-up work (catch-up, replenish) settles
        ticks0, _, _ = usage(process.pid)
        time.sleep(8)
        ticks1, rss, threads = usage(process.pid)
        client = Client(path)
        for _ in range(200): client.call("status")  # warm-up
        one = []
        for _ in range(2000):
            t = time.perf_counter_ns(); client.call("status"); one.append(time.perf_counter_ns() - t)
        client.close()
        fresh = []
        for _ in range(200):
            t = time.perf_counter_ns(); c = Client(path); c.call("status"); c.close(); fresh.append(time.perf_counter_ns() - t)
        _, rss_after, _ = usage(process.pid)
        return dict(idle_ticks=ticks1 - ticks0, rss_kb=rss, threads=threads, rss_after_kb=rss_after,
                    same_conn_us=statistics.median(one) / 1000, same_conn_p99_us=sorted(one)[int(len(one) * 0.99)] / 1000,
                    new_conn_us=statistics.median(fresh) / 1000)
    finally:
        process.terminate(); process.wait(timeout=60)

rounds = int(os.environ.get("SOTTO_BENCH_ROUNDS", "3"))
runs = {"before": [], "after": []}
for _ in range(rounds):
    runs["before"].append(measure(sys.argv[1]))
    runs["after"].append(measure(sys.argv[2]))
before, after = ({key: statistics.median(run[key] for run in runs[side]) for key in runs[side][0]} for side in ("before", "after"))
for key in before:
    ratio = after[key] / before[key] if before[key] else float("nan")
    print(f"BENCH control-socket {key}: before={before[key]:.1f} after={after[key]:.1f} ratio={ratio:.2f}")
PY
