#!/bin/sh
# `sotto chat` start → first full frame (the loaded list and the open conversation drawn;
# SOTTO_CHAT_EXIT_AFTER_FIRST_FRAME=1 quits there) against `sotto ls`, with N conversations
# on one daemon, in one run: both under the same pseudo-terminal (`script`), ROUNDS each,
# alternating; medians and the ratio chat/ls (issue #34: ≤ 1.5×).
#
#   Benchmarks/chat-start-bench.sh .build/release/sotto 1000
set -eu
[ $# -ge 1 ] || { echo "usage: $0 SOTTO_BINARY [CONVERSATIONS]" >&2; exit 64; }
exec python3 - "$@" <<'PY'
import json, os, socket, statistics, subprocess, sys, tempfile, time

binary = os.path.abspath(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
rounds = int(os.environ.get("ROUNDS", "9"))

with tempfile.TemporaryDirectory(prefix="sotto-cb") as tmp:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env.update(SOTTO_KEY_STORE="file", SOTTO_GROUP_DIR=tmp + "/g", SOTTO_RUNTIME_DIR=tmp + "/r")
    daemon = subprocess.Popen([binary, "daemon"], env=env, stdout=subprocess.DEVNULL, stderr=open(tmp + "/log", "wb"))
    try:
        control = tmp + "/r/control.sock"
        deadline = time.monotonic() + 120
        while subprocess.run([binary, "status"], env=env, capture_output=True).returncode != 0:
            if time.monotonic() > deadline: sys.exit("the daemon did not answer")
            time.sleep(0.1)
        # N conversations over one control connection (the CLI would spawn N processes).
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(control)
        reader = sock.makefile("rb")
        for n in range(count):
            sock.sendall(json.dumps({"jsonrpc": "2.0", "id": n + 1, "method": "newConversation",
                                     "params": {"name": f"conversation {n}"}}).encode() + b"\n")
            while True:
                reply = json.loads(reader.readline())
                if reply.get("id") == n + 1: break
            if "error" in reply: sys.exit(f"newConversation: {reply['error']}")
        sock.close()

        def timed(command, extra):
            started = time.monotonic()
            result = subprocess.run(["script", "-qec", command, "/dev/null"], env={**env, **extra},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            elapsed = time.monotonic() - started
            if result.returncode != 0: sys.exit(f"{command} exited {result.returncode}: {result.stderr[-500:]}")
            return elapsed

        ls, chat = [], []
        for _ in range(rounds):
            ls.append(timed(f"{binary} ls", {}))
            chat.append(timed(f"{binary} chat", {"SOTTO_CHAT_EXIT_AFTER_FIRST_FRAME": "1"}))
        ls_ms, chat_ms = statistics.median(ls) * 1000, statistics.median(chat) * 1000
        print(f"CHAT-START conversations={count} rounds={rounds}")
        print(f"  sotto ls:                 median {ls_ms:.1f} ms (min {min(ls)*1000:.1f})")
        print(f"  sotto chat → first frame: median {chat_ms:.1f} ms (min {min(chat)*1000:.1f})")
        print(f"  ratio chat/ls: {chat_ms / ls_ms:.2f} (target ≤ 1.5)")
    finally:
        daemon.terminate()
        daemon.wait()
PY
