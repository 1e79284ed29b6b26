#!/usr/bin/env python3
"""Makes attachment-release-v1.json: test vectors for docs/protocol/attachment-relay.md §4 step 3
(the need a sender publishes) and §6.1 (a member's mark, and which data is a need), written from
that page with the standard library only, independently of Sotto's Swift code. Every input is
derived from fixed seeds; nothing is random, so the output is the same on every run.

The public keys are real compressed secp256k1 points, computed here by a plain affine
double-and-add of the generator (no third-party library).

usage: make_attachment_release_vectors.py   (writes attachment-release-v1.json beside it)
"""
import hashlib, json, os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "attachment-release-v1.json")

LABEL = b"sotto-attachment-fetched v1"   # §6.1: those 27 ASCII bytes, no terminator
assert len(LABEL) == 27

# secp256k1 (SEC 2 §2.4.1)
P_FIELD = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
N_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def point_add(a, b):
    """Affine addition on y^2 = x^3 + 7 over P_FIELD; None is the point at infinity."""
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2 and (y1 + y2) % P_FIELD == 0:
        return None
    if a == b:
        lam = 3 * x1 * x1 * pow(2 * y1, -1, P_FIELD) % P_FIELD
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, P_FIELD) % P_FIELD
    x3 = (lam * lam - x1 - x2) % P_FIELD
    return x3, (lam * (x1 - x3) - y1) % P_FIELD


def scalar_mult(k: int):
    assert 1 <= k < N_ORDER
    result, addend = None, G
    while k:
        if k & 1:
            result = point_add(result, addend)
        addend = point_add(addend, addend)
        k >>= 1
    return result


def compressed(point) -> bytes:
    x, y = point
    assert (y * y - x * x * x - 7) % P_FIELD == 0, "not on the curve"
    return bytes([2 + (y & 1)]) + x.to_bytes(32, "big")


# Self-checks against the well-known multiples 1G, 2G, 3G.
assert compressed(scalar_mult(1)).hex() == "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
assert compressed(scalar_mult(2)).hex() == "02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5"
assert compressed(scalar_mult(3)).hex() == "02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9"


def sha256(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def attachment_id(i: int) -> bytes:
    """The reference's id: 16 bytes (attachments.md §3: 32 lowercase hex)."""
    return sha256(b"id-" + str(i).encode())[:16]


def attachment_key(i: int) -> bytes:
    """The reference's 32-byte secret (attachments.md §3: `key`, 64 lowercase hex)."""
    return sha256(b"key-" + str(i).encode())


def private_key(seed) -> int:
    if isinstance(seed, int):
        return seed
    k = int.from_bytes(sha256(seed), "big") % N_ORDER
    assert k != 0
    return k


def mark(key: bytes, public_key: bytes) -> str:
    """§6.1: the first 16 bytes of SHA-256(label || key || P), as 32 lowercase hex."""
    assert len(key) == 32 and len(public_key) == 33 and public_key[0] in (2, 3)
    return sha256(LABEL + key + public_key)[:16].hex()


# Members (their private keys), each one public key in the conversation.
MEMBERS = {name: compressed(scalar_mult(private_key(seed))) for name, seed in [
    ("A", 1), ("B", 2), ("C", 3), ("D", b"member-D"), ("E", b"member-E"),
]}

# (file index, member): file 0 fetched by four members (one key, four marks); member A fetches
# files 0 and 1 (one member, two marks); files 1 and 2 by others too.
MARK_CASES = [(0, "A"), (0, "B"), (0, "C"), (0, "D"), (1, "A"), (1, "E"), (2, "D"), (2, "B")]

marks = []
for i, member in MARK_CASES:
    aid, key, pub = attachment_id(i).hex(), attachment_key(i), MEMBERS[member]
    t = mark(key, pub)
    marks.append({"id": aid, "key": key.hex(), "publicKey": pub.hex(), "mark": t,
                  "subject": f"sotto.att.{aid}.got.{t}", "msgId": f"{aid}.got.{t}"})

# Self-checks of what §6.1 promises of these cases.
assert len({m["mark"] for m in marks}) == len(marks)
assert len({m["mark"] for m in marks if m["id"] == attachment_id(0).hex()}) == 4          # one key, four marks
assert len({m["mark"] for m in marks if m["publicKey"] == MEMBERS["A"].hex()}) == 2      # one member, two marks
assert mark(attachment_key(0), MEMBERS["A"]) == marks[0]["mark"]                          # one mark per file


def need_data(n: int) -> bytes:
    """§4 step 3: n in decimal ASCII with no sign, no leading zero and nothing else (1 … 999)."""
    assert 1 <= n <= 999
    return str(n).encode("ascii")


assert need_data(2) == b"\x32" and need_data(12) == b"\x31\x32"   # §4 step 3's own examples

needs = []
for j, n in enumerate([1, 2, 9, 10, 12, 99, 100, 999]):
    aid = attachment_id(100 + j).hex()
    needs.append({"id": aid, "n": n, "data": need_data(n).hex(),
                  "subject": f"sotto.att.{aid}.need", "msgId": f"{aid}.need"})


def read_need(data: bytes):
    """§6.1 step 3: a need is 1 to 3 ASCII digits, no leading zero, 1 … 999; anything else is None."""
    if not 1 <= len(data) <= 3:
        return None
    if not all(0x30 <= c <= 0x39 for c in data):
        return None
    if data[0] == 0x30:
        return None
    n = int(data.decode("ascii"))
    return n if 1 <= n <= 999 else None


NEED_DATA = [
    (b"1", "the smallest need"),
    (b"7", "one digit"),
    (b"42", "two digits"),
    (b"100", "three digits, inner zeros"),
    (b"999", "the largest need"),
    (b"", "the empty message"),
    (b"0", "zero members is not a need"),
    (b"00", "leading zero"),
    (b"07", "leading zero"),
    (b"1000", "four digits, above 999"),
    (b"+2", "a sign"),
    (b"-1", "a sign, and negative"),
    (b"2 ", "trailing space: nothing else"),
    (b" 2", "leading space: nothing else"),
    (b"2\n", "trailing newline: nothing else"),
    (b"\t2", "leading tab"),
    (b"1e2", "exponent notation"),
    (b"2.0", "a fraction"),
    ("\u0663".encode("utf-8"), "ARABIC-INDIC DIGIT THREE (U+0663): a digit, but not ASCII"),
    ("\uff12".encode("utf-8"), "FULLWIDTH DIGIT TWO (U+FF12): not ASCII"),
    (b"\x00", "a NUL byte"),
    (b"2\x00", "a digit then NUL: nothing else"),
    (b"abc", "not digits"),
    (b"0x2", "hexadecimal"),
]

need_cases = [{"data": d.hex(), "need": read_need(d), "why": why} for d, why in NEED_DATA]

# What the rule gives the cases the text names.
assert [read_need(b) for b in (b"1", b"7", b"42", b"999")] == [1, 7, 42, 999]
assert all(read_need(b) is None for b in (b"0", b"07", b"1000", b"+2", b"2 ", b""))
assert all(read_need(need_data(n)) == n for n in range(1, 1000))

doc = {
    "description": "The need a sender publishes (docs/protocol/attachment-relay.md §4 step 3) and a "
                   "member's mark (§6.1): for several files and members the mark t = first 16 bytes of "
                   "SHA-256(label || key || publicKey), its subject and Nats-Msg-Id; for several n the need's "
                   "data in hex, its subject and Nats-Msg-Id; and data that is or is not a need (§6.1 step 3), "
                   "with the count it reads as (null: not a need). Made by make_attachment_release_vectors.py "
                   "from that page alone (Python standard library).",
    "label": LABEL.decode("ascii"),
    "marks": marks,
    "needs": needs,
    "needData": need_cases,
}

with open(OUT, "w") as f:
    f.write(json.dumps(doc, indent=1, ensure_ascii=True) + "\n")
print(f"wrote {OUT}: {len(marks)} marks, {len(needs)} needs, {len(need_cases)} needData")
