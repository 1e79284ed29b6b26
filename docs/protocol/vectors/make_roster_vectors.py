#!/usr/bin/env python3
"""Makes roster-v1.json: test vectors for docs/protocol/roster.md (versioned rosters), written
from that page with pyca/cryptography and the standard library only, independently of Sotto's
Swift code.

usage: make_roster_vectors.py > roster-v1.json
Everything comes from a fixed seed, so two runs give the same file.

"parse": one content each, and whether a receiver accepts its shape ("ok") or refuses it
("malformed_message"). "sequences": a device's roster at the start, the roster messages in the
order they arrive, what each arrival answers ("written", "duplicate", or the error code), and
the roster at the end (its version, its members, the bases of the deltas still waiting).
"""
import hashlib, json, sys, uuid

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

SEED = b"sotto roster-v1 vectors"
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
DELTA = "sotto/roster_delta:1.0"
FULL = "sotto/membership:1.0"
REMOVE = "sotto/remove:1.0"
REQUEST = "sotto/roster_request:1.0"
RENAME = "sotto/rename:1.0"


def derived(label: str) -> bytes:
    return hashlib.sha256(SEED + b"/" + label.encode()).digest()


def member(label: str) -> dict:
    priv = ec.derive_private_key(int.from_bytes(derived(label), "big") % (N - 1) + 1, ec.SECP256K1())
    pub = priv.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint)
    return {"inboxId": hashlib.sha256(pub).hexdigest(), "publicKey": pub.hex(),
            "endpoint": f"unix:/run/user/1000/{label.lower()}.sock",
            "clientId": str(uuid.UUID(bytes=derived("client/" + label)[:16], version=4)),
            "profileName": label}


LABELS = ["C", "R", "A", "B", "D", "E"]   # C creates; R is the device the sequences run on
M = {label: member(label) for label in LABELS}


def text(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def delta(base, added=(), removed=(), renamed=(), version=None):
    return text({"base": base, "version": base + 1 if version is None else version,
                 "added": [M[x] for x in added], "removed": [M[x]["inboxId"] for x in removed],
                 "renamed": [{"inboxId": M[x]["inboxId"], "profileName": name} for x, name in renamed]})


def full(version, labels, name="Trip"):
    obj = {"name": name, "members": [M[x] for x in labels]}
    if version is not None:
        obj["version"] = version
    return text(obj)


def mid(name: str) -> str:
    return hashlib.sha256(b"message/" + name.encode()).hexdigest()[:32]


def parse_cases():
    a, b = M["A"], M["B"]
    liar = dict(b, inboxId=a["inboxId"])
    ok = [
        ("delta adds one member", DELTA, delta(3, added=["B"])),
        ("delta removes one and renames another", DELTA, delta(7, removed=["A"], renamed=[("B", "Bea")])),
        ("delta with unknown keys (ignored)", DELTA, text({"base": 0, "version": 1, "added": [], "removed": [a["inboxId"]],
                                                           "renamed": [], "note": "x"})),
        ("full roster with a version", FULL, full(4, ["C", "R", "A"])),
        ("full roster without a version (version 1 of the protocol)", FULL, full(None, ["C", "R"])),
        ("roster request at version 3", REQUEST, text({"version": 3})),
        ("roster request at version 0", REQUEST, text({"version": 0})),
        ("roster request at version 2^53 - 1", REQUEST, text({"version": 2**53 - 1})),
        ("roster request with unknown keys (ignored)", REQUEST, text({"version": 7, "note": "x"})),
        ("rename", RENAME, text({"profileName": "Bea"})),
        ("rename to 100 bytes of UTF-8", RENAME, text({"profileName": "é" * 50})),
        ("rename naming another member (the key is ignored: the signer is renamed)", RENAME,
         text({"profileName": "Bea", "inboxId": a["inboxId"]})),
    ]
    bad = [
        ("not JSON", DELTA, "{\"base\":3,"),
        ("a JSON array", DELTA, "[]"),
        ("version is not base + 1", DELTA, delta(3, added=["B"], version=5)),
        ("base is negative", DELTA, delta(-1, added=["B"])),
        ("base is a string", DELTA, text({"base": "3", "version": 4, "added": [], "removed": [a["inboxId"]], "renamed": []})),
        ("base is 2^53 - 1 (version would pass 2^53 - 1)", DELTA, delta(2**53 - 1, added=["B"])),
        ("removed is missing", DELTA, text({"base": 3, "version": 4, "added": [M["B"]], "renamed": []})),
        ("changes nothing", DELTA, delta(3)),
        ("adds a member twice", DELTA, text({"base": 3, "version": 4, "added": [b, b], "removed": [], "renamed": []})),
        ("adds and removes the same member", DELTA, text({"base": 3, "version": 4, "added": [b], "removed": [b["inboxId"]], "renamed": []})),
        ("an inboxId that is not SHA-256(publicKey)", DELTA, text({"base": 3, "version": 4, "added": [liar], "removed": [], "renamed": []})),
        ("removed holds uppercase hex", DELTA, text({"base": 3, "version": 4, "added": [], "removed": [a["inboxId"].upper()], "renamed": []})),
        ("renamed with a control character", DELTA, delta(3, renamed=[("A", "A\u0007")])),
        ("full roster with version 0", FULL, full(0, ["C", "R"])),
        ("full roster with a fractional version", FULL, full(None, ["C", "R"])[:-1] + ",\"version\":1.5}"),
        ("roster request that is a JSON array", REQUEST, "[3]"),
        ("roster request without a version", REQUEST, "{}"),
        ("roster request with a negative version", REQUEST, text({"version": -1})),
        ("roster request with version 2^53", REQUEST, text({"version": 2**53})),
        ("roster request with a string version", REQUEST, text({"version": "3"})),
        ("roster request with a fractional version", REQUEST, "{\"version\":1.5}"),
        ("roster request that is empty", REQUEST, ""),
        ("rename to an empty name", RENAME, text({"profileName": ""})),
        ("rename to 101 bytes", RENAME, text({"profileName": "b" * 101})),
        ("rename with a control character", RENAME, text({"profileName": "Bea\u001b[2J"})),
        ("rename with DEL", RENAME, text({"profileName": "Bea\u007f"})),
        ("rename without a profileName", RENAME, "{}"),
        ("rename to a number", RENAME, text({"profileName": 7})),
        ("rename that is a JSON string", RENAME, text("Bea")),
    ]
    return [{"name": n, "contentType": t, "content": c, "expect": "ok"} for n, t, c in ok] + \
           [{"name": n, "contentType": t, "content": c, "expect": "malformed_message"} for n, t, c in bad]


def arrival(name, content_type, content, expect, sender="C", message_id=None):
    return {"id": message_id or mid(name), "from": sender, "contentType": content_type, "content": content, "expect": expect}


def sequences():
    start = {"version": 3, "members": ["C", "R", "A"]}
    remove_a = text({"inboxId": M["A"]["inboxId"]})
    remove_b = text({"inboxId": M["B"]["inboxId"]})
    d34 = arrival("d34", DELTA, delta(3, added=["B"]), "written")
    d45 = arrival("d45", DELTA, delta(4, removed=["A"]), "written")
    return [
        {"name": "in order", "start": start, "arrive": [d34, d45],
         "end": {"version": 5, "members": ["B", "C", "R"], "pending": []}},
        {"name": "reordered: the later change waits for its predecessor", "start": start, "arrive": [d45, d34],
         "end": {"version": 5, "members": ["B", "C", "R"], "pending": []}},
        {"name": "early change still waiting", "start": start, "arrive": [d45],
         "end": {"version": 3, "members": ["A", "C", "R"], "pending": [4]}},
        {"name": "duplicate push, and the same change under another id", "start": start,
         "arrive": [d34, dict(d34, expect="duplicate"), arrival("d34 again", DELTA, delta(3, added=["B"]), "written")],
         "end": {"version": 4, "members": ["A", "B", "C", "R"], "pending": []}},
        {"name": "a full roster fills the gap, then the waiting change applies", "start": start,
         "arrive": [arrival("d56", DELTA, delta(5, added=["E"]), "written"),
                    arrival("full5", FULL, full(5, ["C", "R", "A", "B"]), "written")],
         "end": {"version": 6, "members": ["A", "B", "C", "E", "R"], "pending": []}},
        {"name": "a newer full roster supersedes waiting and late changes", "start": start,
         "arrive": [d45, arrival("full6", FULL, full(6, ["C", "R", "D"]), "written"), d34],
         "end": {"version": 6, "members": ["C", "D", "R"], "pending": []}},
        {"name": "a stale full roster changes nothing", "start": start,
         "arrive": [arrival("full2", FULL, full(2, ["C", "R"]), "written")],
         "end": {"version": 3, "members": ["A", "C", "R"], "pending": []}},
        {"name": "a removal before the change that removes the member too", "start": start,
         "arrive": [arrival("remove A", REMOVE, remove_a, "written"), d34, d45],
         "end": {"version": 5, "members": ["B", "C", "R"], "pending": []}},
        {"name": "a departed member is never added back", "start": start,
         "arrive": [arrival("remove B", REMOVE, remove_b, "written"), d34],
         "end": {"version": 4, "members": ["A", "C", "R"], "pending": []}},
        {"name": "hostile changes are refused and change nothing", "start": start,
         "arrive": [arrival("from a member", DELTA, delta(3, added=["B"]), "unknown_sender", sender="A"),
                    arrival("drops the creator", DELTA, delta(3, removed=["C"]), "malformed_message"),
                    arrival("removes an unknown member", DELTA, delta(3, removed=["D"]), "malformed_message"),
                    arrival("adds a member already there", DELTA, delta(3, added=["A"]), "malformed_message"),
                    arrival("renames an unknown member", DELTA, delta(3, renamed=[("D", "Dee")]), "malformed_message"),
                    arrival("too far ahead", DELTA, delta(3 + 257, added=["B"]), "malformed_message"),
                    arrival("full roster without the creator", FULL, full(9, ["R", "A"]), "malformed_message"),
                    arrival("garbage", DELTA, "{{{", "malformed_message")],
         "end": {"version": 3, "members": ["A", "C", "R"], "pending": []}},
        {"name": "a roster request or a rename to a member's device is refused and changes nothing", "start": start,
         "arrive": [arrival("request from a member", REQUEST, text({"version": 1}), "unknown_sender", sender="A"),
                    arrival("request from the creator", REQUEST, text({"version": 1}), "unknown_sender"),
                    arrival("request from a stranger", REQUEST, text({"version": 1}), "unknown_sender", sender="D"),
                    arrival("rename from a member", RENAME, text({"profileName": "Ann"}), "unknown_sender", sender="A")],
         "end": {"version": 3, "members": ["A", "C", "R"], "pending": []}},
    ]


json.dump({"description": "docs/protocol/roster.md vectors; made by make_roster_vectors.py",
           "members": M, "parse": parse_cases(), "sequences": sequences()},
          sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
