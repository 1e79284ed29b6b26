#!/usr/bin/env python3
"""The one-time set-up of a Sotto relay in NATS operator mode (docs/relay.md, docs/adr/0051).

Only the owner of a mailbox may consume, ack, or delete its consumer: every device user is
minted by the device itself with the account's *scoped signing key*, whose template allows
JetStream calls only on the durable consumer named by the user's own public nkey
({{subject()}}, which nats-server proves with the connection's nonce signature). No device
user may create, purge or delete a stream, or read one by sequence.

    scripts/relay-operator.py init /etc/sotto-relay            # keys, JWTs, nats.conf, files for devices
    nats-server -c /etc/sotto-relay/nats.conf -sd /var/lib/sotto-relay   # then, once it runs:
    scripts/relay-operator.py streams /etc/sotto-relay nats://127.0.0.1:4222 [--replicas 3]

`init` writes (files holding a secret are mode 0600):
  nats.conf               operator, system account and mailbox account (resolver: MEMORY)
  device-signing.key      what each device needs (SOTTO_RELAY_SIGNING_KEY): the account's public
                          key and the scoped signing key's seed; the same for every device
  admin.creds             a user of the account with no limits: only for `streams`
  operator.nk, account.nk, system.nk   the seeds that signed the JWTs (keep them offline)

Needs only Python 3 and python3-cryptography (Debian). No nsc.
"""
import argparse
import base64
import hashlib
import json
import os
import socket
import sys
import time

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

PREFIX = {"O": 14 << 3, "A": 0, "U": 20 << 3}
SEED_PREFIX = 18 << 3
MAILBOX_STREAM = "SOTTO_MAILBOXES"
BODY_STREAM = "SOTTO_BODIES"
ATTACHMENT_STREAM = "SOTTO_ATTACHMENTS"
S = "{{subject()}}"

# What a device user may do, and nothing else (docs/adr/0051).
DEVICE_TEMPLATE = {
    "pub": {"allow": [
        "sotto.mb.>",                                          # publish a push to any mailbox
        "sotto.body.>",                                        # publish a body by reference
        "$JS.API.INFO",
        "$JS.API.STREAM.INFO." + BODY_STREAM,                  # bodies: anyone with the id may read
        "$JS.API.STREAM.MSG.GET." + BODY_STREAM,
        "sotto.att.>",                                         # publish an attachment's pieces
        "$JS.API.STREAM.INFO." + ATTACHMENT_STREAM,            # attachments: anyone with the id may read
        "$JS.API.STREAM.MSG.GET." + ATTACHMENT_STREAM,
        "$JS.API.STREAM.PURGE." + ATTACHMENT_STREAM,           # and delete (docs/protocol/attachment-relay.md §6)
        "$JS.API.CONSUMER.DURABLE.CREATE." + MAILBOX_STREAM + "." + S,
        "$JS.API.CONSUMER.INFO." + MAILBOX_STREAM + "." + S,
        "$JS.API.CONSUMER.DELETE." + MAILBOX_STREAM + "." + S,
        "$JS.API.CONSUMER.MSG.NEXT." + MAILBOX_STREAM + "." + S,
        "$JS.ACK." + MAILBOX_STREAM + "." + S + ".>",
    ]},
    "sub": {"allow": [
        "_INBOX." + S + ".>",                                  # its own replies only
        "sotto.wake.>",                                        # headers-only notice of a new push
    ]},
    "subs": -1, "data": -1, "payload": -1,
}


def crc16(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def b32(raw):
    return base64.b32encode(raw).decode().rstrip("=")


def encode(raw):
    return b32(raw + crc16(raw).to_bytes(2, "little"))


def decode(text):
    raw = base64.b32decode(text + "=" * (-len(text) % 8))
    if crc16(raw[:-2]).to_bytes(2, "little") != raw[-2:]:
        raise ValueError("bad nkey checksum")
    return raw[:-2]


class Key:
    def __init__(self, kind, seed=None):
        self.kind = kind
        self.seed = seed if seed is not None else os.urandom(32)
        self.private = Ed25519PrivateKey.from_private_bytes(self.seed)
        raw = self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public = encode(bytes([PREFIX[kind]]) + raw)
        prefix = PREFIX[kind]
        self.seed_text = encode(bytes([SEED_PREFIX | (prefix >> 5), (prefix & 31) << 3]) + self.seed)

    @staticmethod
    def from_seed(text):
        raw = decode(text)
        prefix = ((raw[0] & 7) << 5) | (raw[1] >> 3)
        kind = {v: k for k, v in PREFIX.items()}[prefix]
        return Key(kind, raw[2:34])

    def sign(self, data):
        return self.private.sign(data)


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def jwt(issuer, subject, name, nats):
    claims = {"iat": int(time.time()), "iss": issuer.public, "name": name, "sub": subject, "nats": nats}
    claims["jti"] = b32(hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest())
    head = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64url(json.dumps(claims).encode())
    return head + "." + body + "." + b64url(issuer.sign((head + "." + body).encode()))


def write_private(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def creds(user_jwt, user):
    return ("-----BEGIN NATS USER JWT-----\n%s\n------END NATS USER JWT------\n\n"
            "-----BEGIN USER NKEY SEED-----\n%s\n------END USER NKEY SEED------\n" % (user_jwt, user.seed_text))


def init(directory, name):
    os.makedirs(directory, mode=0o700, exist_ok=True)
    if os.path.exists(os.path.join(directory, "nats.conf")):
        sys.exit("%s already holds a relay set-up (nats.conf); refusing to replace its keys" % directory)
    operator, system, account, signing, admin = Key("O"), Key("A"), Key("A"), Key("A"), Key("U")
    operator_jwt = jwt(operator, operator.public, name, {"system_account": system.public, "type": "operator", "version": 2})
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True, "conn": -1, "leaf": -1}
    system_jwt = jwt(operator, system.public, "SYS", {"limits": unlimited, "default_permissions": {"pub": {}, "sub": {}},
                                                      "type": "account", "version": 2})
    account_jwt = jwt(operator, account.public, "sotto-mailboxes", {
        "limits": dict(unlimited, mem_storage=-1, disk_storage=-1, streams=-1, consumer=-1),
        "signing_keys": [{"kind": "user_scope", "key": signing.public, "role": "sotto-device", "template": DEVICE_TEMPLATE}],
        "default_permissions": {"pub": {}, "sub": {}}, "type": "account", "version": 2})
    admin_jwt = jwt(account, admin.public, "sotto-relay-admin", {"pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1,
                                                                 "type": "user", "version": 2})
    with open(os.path.join(directory, "nats.conf"), "w") as conf:
        conf.write("# Written by scripts/relay-operator.py init (docs/relay.md). Operator mode: every user is a JWT.\n"
                   "operator: %s\nsystem_account: %s\nresolver: MEMORY\nresolver_preload: {\n  %s: %s\n  %s: %s\n}\n"
                   "# JetStream's store: nats-server -c nats.conf -sd /var/lib/sotto-relay\njetstream: enabled\n"
                   % (operator_jwt, system.public, system.public, system_jwt, account.public, account_jwt))
    write_private(os.path.join(directory, "device-signing.key"), "%s\n%s\n" % (account.public, signing.seed_text))
    write_private(os.path.join(directory, "admin.creds"), creds(admin_jwt, admin))
    for file, key in (("operator.nk", operator), ("account.nk", account), ("system.nk", system)):
        write_private(os.path.join(directory, file), key.seed_text + "\n")
    print("relay set-up written to %s: account %s, device signing key %s" % (directory, account.public, signing.public))


class Client:
    """Just enough of the NATS protocol for the admin's requests."""

    def __init__(self, url, user_jwt, user):
        host, port = url.split("://", 1)[1].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.file = self.sock.makefile("rb")
        info = json.loads(self.file.readline()[5:])
        connect = {"verbose": False, "pedantic": False, "headers": True, "protocol": 1,
                   "jwt": user_jwt, "sig": b64url(user.sign(info["nonce"].encode()))}
        self.sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nSUB _INBOX.admin.> 1\r\n")

    def request(self, subject, body):
        payload = json.dumps(body).encode()
        self.sock.sendall(("PUB %s _INBOX.admin.1 %d\r\n" % (subject, len(payload))).encode() + payload + b"\r\n")
        while True:
            line = self.file.readline().rstrip(b"\r\n")
            if line.startswith(b"-ERR"):
                sys.exit("relay refused: %s" % line.decode())
            if line == b"PING":
                self.sock.sendall(b"PONG\r\n")
            elif line.startswith(b"MSG"):
                data = self.file.read(int(line.split()[-1]) + 2)[:-2]
                return json.loads(data)


def read_creds(path):
    lines = [line.strip() for line in open(path) if line.strip()]
    return lines[1], Key.from_seed(lines[4])


def streams(directory, url, replicas):
    user_jwt, user = read_creds(os.path.join(directory, "admin.creds"))
    client = Client(url, user_jwt, user)
    day_ns, minute_ns = 86_400 * 10**9, 60 * 10**9
    mailboxes = {"name": MAILBOX_STREAM, "subjects": ["sotto.mb.>"], "retention": "workqueue", "storage": "file",
                 "num_replicas": replicas, "duplicate_window": 10 * minute_ns, "max_age": 30 * day_ns,
                 "max_msg_size": 8192, "max_msgs": -1, "max_bytes": -1, "max_consumers": -1,
                 "max_msgs_per_subject": -1, "discard": "old",
                 # A headers-only copy of each push on sotto.wake.<clientId> wakes its owner's relayd
                 # (device users may not subscribe to sotto.mb.>).
                 "republish": {"src": "sotto.mb.>", "dest": "sotto.wake.>", "headers_only": True}}
    bodies = {"name": BODY_STREAM, "subjects": ["sotto.body.>"], "retention": "limits", "storage": "file",
              "num_replicas": replicas, "duplicate_window": 10 * minute_ns, "max_age": 30 * day_ns,
              "max_msg_size": 1_048_576, "max_msgs": -1, "max_bytes": -1, "max_consumers": -1,
              "max_msgs_per_subject": 1, "discard": "new", "discard_new_per_subject": True}
    attachments = {"name": ATTACHMENT_STREAM, "subjects": ["sotto.att.>"], "retention": "limits", "storage": "file",
                   "num_replicas": replicas, "duplicate_window": 10 * minute_ns, "max_age": 30 * day_ns,
                   "max_msg_size": 66_584, "max_msgs": -1, "max_bytes": -1, "max_consumers": -1,
                   "max_msgs_per_subject": 1, "discard": "new", "discard_new_per_subject": True}
    for config in (mailboxes, bodies, attachments):
        answer = client.request("$JS.API.STREAM.CREATE." + config["name"], config)
        error = answer.get("error")
        if error and error.get("err_code") != 10058:  # 10058: already in use (made before)
            sys.exit("cannot create %s: %s" % (config["name"], error.get("description")))
        if error:
            existing = client.request("$JS.API.STREAM.INFO." + config["name"], {}).get("config", {})
            if "republish" in config and existing.get("republish") != config["republish"]:
                # nats-server 2.9 cannot add a republish to a stream: without it relayd hears of
                # a new push only at its 5-minute sweep.
                sys.exit("%s exists without the wake republish (sotto.mb.> -> sotto.wake.>); delete it "
                         "(it must be empty) and run streams again" % config["name"])
        print("%s: %s" % (config["name"], "created" if not error else "already there"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    first = commands.add_parser("init", help="write keys, JWTs and nats.conf into DIR")
    first.add_argument("directory")
    first.add_argument("--name", default="sotto-relay")
    second = commands.add_parser("streams", help="create the mailbox and body streams (the relay must run)")
    second.add_argument("directory")
    second.add_argument("url")
    second.add_argument("--replicas", type=int, default=1)
    args = parser.parse_args()
    if args.command == "init":
        init(args.directory, args.name)
    else:
        streams(args.directory, args.url, args.replicas)


if __name__ == "__main__":
    main()
