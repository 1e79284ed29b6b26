#!/bin/sh
# Start-up to READY=1, idle RSS, idle CPU ticks and SIGTERM-to-exit of `sotto daemon`,
# the figures behind docs/adr/0024. Each binary given is run ROUNDS times (alternating) on
# a fresh empty group directory, as systemd would (NOTIFY_SOCKET); medians are printed, and with
# two binaries the ratio second/first (e.g. a copy of main's build against this branch's).
#
#   Benchmarks/daemon-lifecycle-bench.sh /tmp/sotto-main .build/debug/sotto
set -eu
[ $# -ge 1 ] || { echo "usage: $0 SOTTO_BINARY [SOTTO_BINARY_2]" >&2; exit 64; }
exec python3 - "$@" <<'PY'
import os, socket, subprocess, sys, tempfile, time, signal, statistics

ROUNDS = int(os.environ.get("ROUNDS", "5"))
IDLE_S = 8.0
TICKS = os.sysconf("SC_CLK_TCK")

def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime

def rss_kb(pid, field="VmRSS:"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0

def one_run(binary):
    with tempfile.TemporaryDirectory(prefix="sotto-lb") as tmp:
        notify_path = tmp + "/notify.sock"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        env = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_USEC", "JOURNAL_STREAM")}
        env.update(SOTTO_KEY_STORE="file", SOTTO_GROUP_DIR=tmp + "/g", SOTTO_RUNTIME_DIR=tmp + "/r", NOTIFY_SOCKET=notify_path)
        log = open(tmp + "/log", "wb")
        started = time.monotonic()
        proc = subprocess.Popen([binary, "daemon"], env=env, stdout=subprocess.DEVNULL, stderr=log)
        notify.settimeout(60)
        while b"READY=1" not in notify.recv(4096):
            pass
        ready_ms = (time.monotonic() - started) * 1000
        time.sleep(2)  # the first idle checkpoint and the unused-inbox refill settle
        before = ticks(proc.pid)
        time.sleep(IDLE_S)
        idle_ticks = ticks(proc.pid) - before
        rss, anon = rss_kb(proc.pid), rss_kb(proc.pid, "RssAnon:")
        stop_started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(60)
        stop_ms = (time.monotonic() - stop_started) * 1000
        if status != 0:
            sys.exit(f"{binary}: exit {status}\n" + open(tmp + "/log").read())
        return ready_ms, rss, idle_ticks, stop_ms, anon

# Rounds alternate between the binaries, so a load that comes and goes (a build beside
# it) weighs on both alike.
runs = {binary: [] for binary in sys.argv[1:]}
for _ in range(ROUNDS):
    for binary in sys.argv[1:]:
        runs[binary].append(one_run(binary))
results = {}
for binary in sys.argv[1:]:
    med = [statistics.median(r[i] for r in runs[binary]) for i in range(5)]
    results[binary] = med
    print(f"{binary}: start-up to READY=1 {med[0]:.1f} ms, idle RSS {med[1]/1024:.1f} MiB (anonymous {med[4]/1024:.1f} MiB), "
          f"{med[2]:.0f} CPU ticks per {IDLE_S:.0f} s idle ({TICKS}/s), SIGTERM to exit {med[3]:.1f} ms "
          f"(median of {ROUNDS})")
if len(sys.argv) == 3:
    a, b = (results[x] for x in sys.argv[1:])
    print(f"ratio second/first: start-up {b[0]/a[0]:.2f}, RSS {b[1]/a[1]:.2f} (anonymous {b[4]/a[4]:.2f}), stop {b[3]/a[3]:.2f}")
PY
