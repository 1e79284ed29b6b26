#!/bin/sh
# `sotto ls`, process start → exit, against a C client making the same JSON-RPC call over the
# same socket (Benchmarks/CLIStartBench/ls-client.c, built here with cc -O2), in one run:
# ROUNDS each, in alternating batches of 5, on one daemon with N conversations. CPU (user +
# system) and peak RSS come from each child's rusage (wait4), taken by a C parent
# (CLIStartBench/measure.c): a child's peak RSS counts its parent's from before execve.
# Issue #33: CPU ≤ 5× the C client's, peak RSS ≤ 12 MB.
#
#   Benchmarks/cli-start-bench.sh .build/release/sotto [CONVERSATIONS]
set -eu
[ $# -ge 1 ] || { echo "usage: $0 SOTTO_BINARY [CONVERSATIONS]" >&2; exit 64; }
here=$(cd "$(dirname "$0")" && pwd)
exec python3 - "$here" "$@" <<'PY'
import json, os, socket, statistics, subprocess, sys, tempfile, time

here, binary = sys.argv[1], os.path.abspath(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 else 20
rounds = int(os.environ.get("ROUNDS", "40"))

with tempfile.TemporaryDirectory(prefix="sotto-lsb") as tmp:
    client, measure = tmp + "/ls-client", tmp + "/measure"
    subprocess.run(["cc", "-O2", "-o", client, here + "/CLIStartBench/ls-client.c"], check=True)
    subprocess.run(["cc", "-O2", "-o", measure, here + "/CLIStartBench/measure.c"], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env.update(SOTTO_KEY_STORE="file", SOTTO_GROUP_DIR=tmp + "/g", SOTTO_RUNTIME_DIR=tmp + "/r")
    daemon = subprocess.Popen([binary, "daemon"], env=env, stdout=subprocess.DEVNULL, stderr=open(tmp + "/log", "wb"))
    try:
        deadline = time.monotonic() + 120
        while subprocess.run([binary, "status"], env=env, capture_output=True).returncode != 0:
            if time.monotonic() > deadline: sys.exit("the daemon did not answer")
            time.sleep(0.1)
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(tmp + "/r/control.sock")
        reader = sock.makefile("rb")
        for n in range(count):
            sock.sendall(json.dumps({"jsonrpc": "2.0", "id": n + 1, "method": "newConversation",
                                     "params": {"name": f"conversation {n}"}}).encode() + b"\n")
            while json.loads(reader.readline()).get("id") != n + 1: pass
        sock.close()

        def measured(argv, times):
            """[(CPU ms, peak RSS KB)] of `times` runs, one after another."""
            result = subprocess.run([measure, str(times)] + argv, env=env, capture_output=True, text=True)
            if result.returncode != 0: sys.exit(f"{argv}: {result.stderr[-400:]}")
            return [(int(cpu) / 1000, int(rss)) for cpu, rss in (line.split() for line in result.stdout.split("\n") if line)]

        sotto, c = [], []
        for _ in range(max(1, rounds // 5)):
            sotto += measured([binary, "ls"], 5)
            c += measured([client, tmp + "/r"], 5)
        def summary(samples):
            cpu = [s[0] for s in samples]; rss = [s[1] for s in samples]
            return statistics.mean(cpu), statistics.median(cpu), max(rss)
        s_mean, s_median, s_rss = summary(sotto)
        c_mean, c_median, c_rss = summary(c)
        print(f"CLI-START conversations={count} rounds={rounds}")
        print(f"  sotto ls:        CPU mean {s_mean:.2f} ms (median {s_median:.2f}), peak RSS {s_rss / 1024:.1f} MB")
        print(f"  C client (same call): CPU mean {c_mean:.2f} ms (median {c_median:.2f}), peak RSS {c_rss / 1024:.1f} MB")
        print(f"  ratio CPU sotto/C: {s_mean / max(c_mean, 0.001):.1f}x (target ≤ 5); sotto peak RSS {s_rss / 1024:.1f} MB (target ≤ 12)")
    finally:
        daemon.terminate()
        daemon.wait()
PY
