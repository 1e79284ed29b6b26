#!/usr/bin/env python3
"""What one relay connection costs nats-server (issue #19's scale question, docs/adr/0057).

A real nats-server (Debian's, JetStream on, file storage) on loopback, and COUNT client
connections from this one process, each as Sotto holds them (docs/adr/0044, 0056):
  1. idle: CONNECT, one SUB on its mailbox's wake subject, one on its own inbox, and a PING;
     the server's RSS growth per connection, and its CPU over IDLE seconds;
  2. active: the same connections, each publishing one padded 4,099-byte push into its own
     mailbox subject of a stream made like SOTTO_MAILBOXES (work queue, file storage, the
     headers-only republish to sotto.wake.>) once every PERIOD seconds, spread evenly, for
     WINDOW seconds: the server's CPU per push and per active connection at that rate;
  3. baseline, in the same run: the same pushes from ONE connection (today's design before
     issue #19: one connection per device), so the per-connection cost is read as a ratio.
Every loop is bounded in count and time; only 127.0.0.1 is used.
Usage: Benchmarks/relay-connection-cost.py [COUNT] [IDLE_S] [PERIOD_S] [WINDOW_S]
       (default 5000 20 10 30)
"""
import json, os, resource, selectors, socket, subprocess, sys, tempfile, time

count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
idle_s = float(sys.argv[2]) if len(sys.argv) > 2 else 20
period_s = float(sys.argv[3]) if len(sys.argv) > 3 else 10
window_s = float(sys.argv[4]) if len(sys.argv) > 4 else 30
NATS = "/usr/sbin/nats-server"
if not os.access(NATS, os.X_OK):
    print("nats-server not installed (make deps)")
    sys.exit(0)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
if hard < count + 64:
    sys.exit(f"the open-files limit {hard} is below {count} connections")
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close(); return port


def rss_kb(pid):
    return next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS"))


def cpu_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.recv(4096)  # INFO
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"lang":"c","version":"3.4.1","protocol":1}\r\n')
    return s


def read_until(s, needle, limit_s=10):
    data, deadline = b"", time.monotonic() + limit_s
    s.settimeout(limit_s)
    while needle not in data:
        if time.monotonic() > deadline:
            raise SystemExit(f"no {needle!r} from the server")
        data += s.recv(65536)
    return data


tmp = tempfile.mkdtemp(prefix="sotto-conn-cost.")
port, mport = free_port(), free_port()
log = open(f"{tmp}/nats.log", "w")
server = subprocess.Popen([NATS, "-js", "-a", "127.0.0.1", "-p", str(port), "-m", str(mport), "-sd", f"{tmp}/js"],
                          stdout=log, stderr=log)
try:
    deadline = time.monotonic() + 30
    while "Server is ready" not in open(f"{tmp}/nats.log").read():
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("nats-server did not start")
        time.sleep(0.05)
    pid = server.pid

    ctl = connect(port)
    stream = {"name": "SOTTO_MAILBOXES", "subjects": ["sotto.mb.>"], "retention": "workqueue", "storage": "file",
              "num_replicas": 1, "max_msg_size": 8192, "max_msgs": -1, "max_bytes": -1, "max_age": 0,
              "max_msgs_per_subject": -1, "discard": "old",
              "republish": {"src": "sotto.mb.>", "dest": "sotto.wake.>", "headers_only": True}}
    body = json.dumps(stream).encode()
    ctl.sendall(b"SUB _INBOX.ctl 1\r\nPUB $JS.API.STREAM.CREATE.SOTTO_MAILBOXES _INBOX.ctl %d\r\n%s\r\nPING\r\n" % (len(body), body))
    reply = read_until(ctl, b"PONG")
    if b'"error"' in reply:
        raise SystemExit(f"stream create: {reply[-300:]!r}")

    push = b"\x01" + (4096).to_bytes(2, "big") + os.urandom(4096)  # 4,099 bytes, like a padded frame
    assert len(push) == 4099

    def publish(s, mailbox, sequence):
        s.sendall(b"PUB sotto.mb.%d _INBOX.c%d.%d 4099\r\n%s\r\n" % (mailbox, mailbox, sequence, push))

    def drain(selector, until):
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            for key, _ in selector.select(timeout=min(left, 0.05)):
                try:
                    key.fileobj.recv(1 << 20)
                except BlockingIOError:
                    pass

    # 1. Idle connections.
    rss0 = rss_kb(pid)
    conns = []
    for i in range(count):
        s = connect(port)
        s.sendall(b"SUB sotto.wake.%d 1\r\nSUB _INBOX.c%d.* 2\r\nPING\r\n" % (i, i))
        conns.append(s)
    for s in conns:
        read_until(s, b"PONG")
        s.setblocking(False)
    time.sleep(3)  # let the server settle before reading its memory
    rss1 = rss_kb(pid)
    c0 = cpu_ticks(pid); time.sleep(idle_s); c1 = cpu_ticks(pid)
    idle_cpu = (c1 - c0) / TICK / idle_s * 100
    print(f"IDLE   {count} connections (2 SUBs each): nats-server RSS +{(rss1 - rss0) / 1024:.1f} MB, "
          f"{(rss1 - rss0) / count:.1f} KB per connection; CPU {idle_cpu:.3f}% of a core over {idle_s:.0f} s")

    selector = selectors.DefaultSelector()
    for s in conns:
        selector.register(s, selectors.EVENT_READ)

    def run(senders, label):
        """Each of `count` mailboxes gets one push per period, spread evenly, from `senders`."""
        rate = count / period_s
        sent, sequence = 0, 0
        start = time.monotonic()
        c_start = cpu_ticks(pid)
        while True:
            now = time.monotonic()
            if now - start >= window_s:
                break
            due = int((now - start) * rate)
            while sent < due:
                mailbox = sent % count
                publish(senders(mailbox), mailbox, sequence)
                sent += 1; sequence += 1
            drain(selector, min(start + window_s, time.monotonic() + 0.02))
        drain(selector, time.monotonic() + 1)
        cpu = (cpu_ticks(pid) - c_start) / TICK
        print(f"ACTIVE {label}: {sent} pushes of 4,099 bytes in {window_s:.0f} s ({sent / window_s:.0f}/s, "
              f"each of {count} mailboxes one per {period_s:.0f} s): nats-server CPU {cpu / window_s * 100:.1f}% of a core, "
              f"{cpu * 1000 / sent:.3f} ms per push, {cpu / window_s * 100 / count * 1000:.3f}% of a core per 1,000 mailboxes")
        return cpu / sent

    per_connection = run(lambda mailbox: conns[mailbox], f"{count} connections, each its own mailbox")
    # Purge between the runs so both start from an empty stream.
    ctl.sendall(b"PUB $JS.API.STREAM.PURGE.SOTTO_MAILBOXES _INBOX.ctl 0\r\n\r\nPING\r\n")
    read_until(ctl, b"PONG")
    shared = run(lambda mailbox: conns[0], f"one connection for all {count} mailboxes (baseline)")
    print(f"RATIO  server CPU per push, a connection per mailbox / one shared connection: {per_connection / shared:.2f}x")
    print(f"SERVER RSS at the end {rss_kb(pid) / 1024:.1f} MB (before the connections {rss0 / 1024:.1f} MB)")
    for s in conns:
        s.close()
finally:
    server.terminate()
    server.wait(timeout=30)
    subprocess.run(["rm", "-rf", tmp])
