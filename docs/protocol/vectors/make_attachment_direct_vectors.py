#!/usr/bin/env python3
"""Makes attachment-direct-v1.json: test vectors for docs/protocol/attachment-direct.md (the
fetch of a stored attachment file from another device's endpoint), written from that page
with the standard library only, independently of Sotto's Swift code. The stored files come
from attachment-v1.json beside it.

usage: make_attachment_direct_vectors.py > attachment-direct-v1.json
"""
import base64, hashlib, json, os

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER_LEN = 8
STRIDE = 65_536 + 16          # a chunk and its tag
MAX_PIECES = 1_600            # a 100 MiB file's chunks
OK = b"#sotto-attachment v1 ok"
REFUSED = b"#sotto-attachment v1 refused "
PREFIX = b"#sotto-attachment-fetch v1 "

M = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"   # a message id
A = "d241db8eb5127b93e03acdd7cf8bcf31"   # an attachment id


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def unb64u(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def piece_range(i: int, length: int):
    """attachment-relay.md §2: piece 0 is the header and chunk 0; piece i > 0 is chunk i."""
    start = 0 if i == 0 else HEADER_LEN + STRIDE * i
    return start, min(length, HEADER_LEN + STRIDE * (i + 1))


def is_hex16(s: bytes) -> bool:
    return len(s) == 32 and all(c in b"0123456789abcdef" for c in s)


def parse_request(line: bytes):
    """§2: exactly PREFIX <32 hex> SP <32 hex> SP <decimal>, no leading zero, below 1,600."""
    if not line.startswith(PREFIX):
        return None
    fields = line[len(PREFIX):].split(b" ")
    if len(fields) != 3 or not is_hex16(fields[0]) or not is_hex16(fields[1]):
        return None
    d = fields[2]
    if not d or len(d) > 4 or not all(48 <= c <= 57 for c in d) or (len(d) > 1 and d[0] == 48):
        return None
    piece = int(d)
    if piece >= MAX_PIECES:
        return None
    return {"messageId": fields[0].decode(), "attachmentId": fields[1].decode(), "firstPiece": piece}


def request_case(name, line: bytes, note=""):
    parsed = parse_request(line)
    case = {"name": name, "line": b64u(line)}
    if note:
        case["note"] = note
    case["expect"] = {"request": parsed} if parsed else {"refusal": "bad_request"}
    return case


requests = [
    request_case("first_piece", PREFIX + f"{M} {A} 0".encode()),
    request_case("piece_7", PREFIX + f"{M} {A} 7".encode()),
    request_case("last_possible_piece", PREFIX + f"{M} {A} 1599".encode()),
    request_case("piece_1600", PREFIX + f"{M} {A} 1600".encode(), "no file has 1,601 pieces"),
    request_case("leading_zero", PREFIX + f"{M} {A} 07".encode()),
    request_case("negative", PREFIX + f"{M} {A} -1".encode()),
    request_case("plus_sign", PREFIX + f"{M} {A} +1".encode()),
    request_case("five_digits", PREFIX + f"{M} {A} 00001".encode()),
    request_case("uppercase_hex", PREFIX + f"{M.upper()} {A} 0".encode()),
    request_case("short_id", PREFIX + f"{M[:30]} {A} 0".encode()),
    request_case("two_spaces", PREFIX + f"{M}  {A} 0".encode()),
    request_case("trailing_space", PREFIX + f"{M} {A} 0 ".encode()),
    request_case("tab", PREFIX + f"{M}\t{A} 0".encode()),
    request_case("carriage_return", PREFIX + f"{M} {A} 0\r".encode(), "the line ends at LF only; a CR is part of it"),
    request_case("no_fields", b"#sotto-attachment-fetch v1"),
    request_case("version_2", f"#sotto-attachment-fetch v2 {M} {A} 0".encode()),
    request_case("escape_bytes", PREFIX + f"{M} {A} 0".encode() + b"\x1b[2J"),
    request_case("not_utf8", PREFIX + f"{M} {A} ".encode() + b"\xff"),
]

answers = [
    {"name": "ok", "line": b64u(OK), "expect": "ok"},
    {"name": "bad_request", "line": b64u(REFUSED + b"bad_request"), "expect": "bad_request"},
    {"name": "unknown_attachment", "line": b64u(REFUSED + b"unknown_attachment"), "expect": "unknown_attachment"},
    {"name": "busy", "line": b64u(REFUSED + b"busy"), "expect": "busy"},
    {"name": "unknown_code", "line": b64u(REFUSED + b"gone"), "expect": "not_spoken"},
    {"name": "ok_with_more", "line": b64u(OK + b" 5"), "expect": "not_spoken"},
    {"name": "push_ack", "line": b64u(b'{"ok":false,"error":"malformed_payload","retry":false}'), "expect": "not_spoken",
     "note": "an endpoint without this page answers the request as a push"},
    {"name": "empty", "line": "", "expect": "not_spoken"},
]

with open(os.path.join(HERE, "attachment-v1.json")) as f:
    attachment_vectors = json.load(f)
responses = []
for name, first in [("empty", 0), ("chunk_plus_one", 0), ("chunk_plus_one", 1), ("four_chunks_short_last", 0),
                    ("four_chunks_short_last", 2), ("four_chunks_short_last", 3)]:
    stored = unb64u(next(v for v in attachment_vectors["files"] if v["name"] == name)["stored"])
    start, _ = piece_range(first, len(stored))
    body = OK + b"\n" + stored[start:]
    responses.append({"file": name, "storedLength": len(stored), "firstPiece": first, "offset": start,
                      "answerLength": len(body), "answerSha256": hashlib.sha256(body).hexdigest()})

print(json.dumps({
    "spec": "docs/protocol/attachment-direct.md",
    "made_with": "make_attachment_direct_vectors.py (Python standard library; the stored files of attachment-v1.json)",
    "okLine": OK.decode(), "refusedPrefix": REFUSED.decode(), "requestPrefix": PREFIX.decode(),
    "requests": requests, "answers": answers, "responses": responses,
}, indent=1))
