#!/usr/bin/env python3
"""What a mailbox costs nats-server in each layout docs/adr/0051 weighed, measured in one run:
(a) a durable consumer per identity on the shared SOTTO_MAILBOXES stream (chosen), against
(b) a stream of its own per identity with its consumer. Prints RSS, files and disk per
mailbox for N mailboxes and the ratio b/a (idle CPU: the whole server, % of one core). Needs nats-server and python3-cryptography.

    Benchmarks/relay-mailbox-layout-cost.py [N]        # default 1000
"""
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("operator", os.path.join(HERE, "..", "scripts", "relay-operator.py"))
operator = importlib.util.module_from_spec(spec)
spec.loader.exec_module(operator)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1])


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as stat:
        return sum(int(x) for x in stat.read().rsplit(")", 1)[1].split()[11:13])


def measure(setup, layout, count):
    store = tempfile.mkdtemp(prefix="sotto-layout-")
    port = free_port()
    server = subprocess.Popen(["nats-server", "-c", os.path.join(setup, "nats.conf"), "-a", "127.0.0.1", "-p", str(port), "-sd", store],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.2)
        user_jwt, user = operator.read_creds(os.path.join(setup, "admin.creds"))
        client = operator.Client("nats://127.0.0.1:%d" % port, user_jwt, user)
        day = 86_400 * 10**9
        client.request("$JS.API.STREAM.CREATE.SOTTO_MAILBOXES", {"name": "SOTTO_MAILBOXES", "subjects": ["sotto.mb.>"],
                       "retention": "workqueue", "storage": "file", "max_age": 30 * day, "duplicate_window": 600 * 10**9})
        time.sleep(1)
        before = rss_kb(server.pid)
        started = time.time()
        for index in range(count):
            subject = "sotto.mb.00000000-0000-4000-8000-%012d" % index
            if layout == "b":
                own = subject.replace("sotto.mb.", "sotto.own.")  # beside the shared stream's subjects
                name = "MB%d" % index
                client.request("$JS.API.STREAM.CREATE." + name, {"name": name, "subjects": [own], "retention": "workqueue",
                               "storage": "file", "max_age": 30 * day, "duplicate_window": 600 * 10**9})
                answer = client.request("$JS.API.CONSUMER.DURABLE.CREATE.%s.c" % name, {"stream_name": name, "config": {
                    "durable_name": "c", "ack_policy": "explicit", "deliver_policy": "all", "filter_subject": own}})
            else:
                answer = client.request("$JS.API.CONSUMER.DURABLE.CREATE.SOTTO_MAILBOXES.c%d" % index, {
                    "stream_name": "SOTTO_MAILBOXES", "config": {"durable_name": "c%d" % index, "ack_policy": "explicit",
                                                                 "deliver_policy": "all", "filter_subject": subject}})
            if "error" in answer:
                sys.exit("layout %s, mailbox %d: %s" % (layout, index, answer["error"]))
        elapsed = time.time() - started
        time.sleep(3)
        grown = rss_kb(server.pid) - before
        files = sum(len(names) for _, _, names in os.walk(store))
        disk = int(subprocess.run(["du", "-sk", store], capture_output=True, text=True).stdout.split()[0])
        ticks = cpu_ticks(server.pid)
        time.sleep(10)
        idle = (cpu_ticks(server.pid) - ticks) / os.sysconf("SC_CLK_TCK") / 10 * 100
        return {"create_ms": elapsed * 1000 / count, "rss_kb": grown / count, "files": files / count, "disk_kb": disk / count, "idle_cpu_pct": idle}
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(store, ignore_errors=True)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    setup = tempfile.mkdtemp(prefix="sotto-layout-setup-")
    try:
        with open(os.devnull, "w") as quiet:
            stdout, sys.stdout = sys.stdout, quiet
            operator.init(os.path.join(setup, "relay"), "bench")
            sys.stdout = stdout
        results = {layout: measure(os.path.join(setup, "relay"), layout, count) for layout in ("a", "b")}
    finally:
        shutil.rmtree(setup, ignore_errors=True)
    print("%d mailboxes on nats-server %s" % (count, subprocess.run(["nats-server", "--version"], capture_output=True, text=True).stdout.strip()))
    print("%-14s %12s %12s %8s" % ("per mailbox", "(a) consumer", "(b) stream", "b/a"))
    for key in ("rss_kb", "files", "disk_kb", "create_ms", "idle_cpu_pct"):
        a, b = results["a"][key], results["b"][key]
        print("%-14s %12.1f %12.1f %8s" % (key, a, b, "%.2f" % (b / a) if a else "-"))


if __name__ == "__main__":
    main()
