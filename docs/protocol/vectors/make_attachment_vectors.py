#!/usr/bin/env python3
"""Makes attachment-v1.json: test vectors for docs/protocol/attachments.md (the attachment
reference and the stored file), written from that page with pyca/cryptography and hashlib only,
independently of Sotto's Swift code.

usage: make_attachment_vectors.py > attachment-v1.json
Everything comes from a fixed seed, so two runs give the same file.
"""
import base64, hashlib, json, sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SEED = b"sotto attachment-v1 vectors"

# --- attachments.md §2 and §4 ---------------------------------------------------------------
MAX_SIZE = 104_857_600
CHUNK = 65_536
TAG = 16
HEADER = b"SOTA" + bytes([1, 16, 0, 0])   # magic, version 1, chunk size 2^16, reserved
LABEL = b"sotto/attachment/v1"
KEY_INFO = b"sotto/attachment/v1/chunk-key"
PNG = bytes.fromhex("89504e470d0a1a0a")
JPEG = bytes.fromhex("ffd8ff")


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def derived(label: str, n: int = 32) -> bytes:
    out, i = b"", 0
    while len(out) < n:
        out += hashlib.sha256(SEED + b"/" + label.encode() + b"/" + str(i).encode()).digest()
        i += 1
    return out[:n]


def padded_size(n: int) -> int:
    """§4: round n up to a multiple of 2^max(12, bitLength(n) - 5), at least 4096."""
    step = 1 << max(12, n.bit_length() - 5)
    return max(4096, -(-n // step) * step)


def chunk_count(n: int) -> int:
    return -(-padded_size(n) // CHUNK)


def stored_length(n: int) -> int:
    return len(HEADER) + padded_size(n) + TAG * chunk_count(n)


def chunk_key(secret: bytes, attachment_id: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=attachment_id, info=KEY_INFO).derive(secret)


def nonce(i: int) -> bytes:
    return bytes(4) + i.to_bytes(8, "big")


def aad(attachment_id: bytes, i: int, final: bool) -> bytes:
    return LABEL + attachment_id + HEADER + i.to_bytes(8, "big") + bytes([1 if final else 0])


def seal_chunks(plain: bytes, attachment_id: bytes, secret: bytes, *, pad=None, finals=None, header=HEADER):
    """The stored file's parts: the header, then one sealed chunk per 65,536 bytes of the padded
    plaintext. `pad` replaces the zero padding; `finals` overrides the final flags."""
    size = padded_size(len(plain))
    p = plain + (pad if pad is not None else bytes(size - len(plain)))
    assert len(p) == size
    k = chunk_key(secret, attachment_id)
    pieces = [p[i:i + CHUNK] for i in range(0, size, CHUNK)]
    out = []
    for i, piece in enumerate(pieces):
        final = (i == len(pieces) - 1) if finals is None else finals[i]
        out.append(ChaCha20Poly1305(k).encrypt(nonce(i), piece, aad(attachment_id, i, final)))
    return header, out


# --- §5: a reader, to check every case below says what the page says ---------------------------

def read(ref: dict, stored: bytes):
    """Returns the file's bytes, or (error, chunk) as §5 orders the checks."""
    size, aid, secret = ref["size"], bytes.fromhex(ref["id"]), bytes.fromhex(ref["key"])
    if len(stored) < 8:
        return ("attachment_truncated", None)
    if stored[:8] != HEADER:
        return ("attachment_bad_header", None)
    k, p, out, at = chunk_count(size), padded_size(size), b"", 8
    key = chunk_key(secret, aid)
    for i in range(k):
        n = min(CHUNK, p - i * CHUNK) + TAG
        if len(stored) < at + n:
            return ("attachment_truncated", None)
        try:
            plain = ChaCha20Poly1305(key).decrypt(nonce(i), stored[at:at + n], aad(aid, i, i == k - 1))
        except Exception:
            return ("attachment_bad_chunk", i)
        data = max(0, min(len(plain), size - i * CHUNK))
        if any(plain[data:]):
            return ("attachment_bad_padding", i)
        out += plain[:data]
        at += n
    if len(stored) > at:
        return ("attachment_too_long", None)
    if hashlib.sha256(stored).hexdigest() != ref["sha256"]:
        return ("attachment_digest_mismatch", None)
    return out


def reference(attachment_id, secret, size, stored, name, media_type, caption=None, thumbnail=None):
    ref = {"id": attachment_id.hex(), "size": size, "length": len(stored),
           "sha256": hashlib.sha256(stored).hexdigest(), "key": secret.hex(), "name": name, "mediaType": media_type}
    if caption is not None:
        ref["caption"] = caption
    if thumbnail is not None:
        ref["thumbnail"] = b64u(thumbnail)
    return ref


# --- §6: the name a file is saved under ------------------------------------------------------

REPLACED = set(range(0x00, 0x20)) | {0x7F} | set(range(0x80, 0xA0)) | {0x2F, 0x5C} \
    | {0x061C, 0x200E, 0x200F} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def safe_name(name: str) -> str:
    s = "".join("_" if ord(c) in REPLACED else c for c in name)
    s = s.lstrip(". ").rstrip(" ")
    if len(s.encode()) > 255:
        dot = s.rfind(".")
        suffix = s[dot:] if dot > 0 else ""
        if not (2 <= len(suffix.encode()) <= 16):
            suffix = ""
        stem = s[:len(s) - len(suffix)] if suffix else s
        budget = 255 - len(suffix.encode())
        while len(stem.encode()) > budget:
            stem = stem[:-1]
        s = (stem + suffix).rstrip(" ")  # a cut may end on a space
    return s or "attachment"


def main() -> int:
    files, stored_cases, references = [], [], []

    def plaintext(label: str, n: int) -> bytes:
        return derived("plain-" + label, n) if n else b""

    # Positive files: sizes at the chunk and padding edges.
    good = {}
    for label, n, name, media in [
        ("empty", 0, "empty.txt", "text/plain"),
        ("one_byte", 1, "a.txt", "text/plain"),
        ("one_block", 4096, "block.bin", "application/octet-stream"),
        ("block_plus_one", 4097, "notes.md", "text/markdown"),
        ("one_chunk", 65_536, "chunk.bin", "application/octet-stream"),
        ("chunk_plus_one", 65_537, "photo.jpg", "image/jpeg"),
        ("four_chunks_short_last", 200_000, "report.pdf", "application/pdf"),
    ]:
        aid, secret = derived(label + "-id", 16), derived(label + "-key")
        plain = plaintext(label, n)
        header, chunks = seal_chunks(plain, aid, secret)
        stored = header + b"".join(chunks)
        assert len(stored) == stored_length(n)
        ref = reference(aid, secret, n, stored, name, media)
        good[label] = (aid, secret, plain, header, chunks, ref)
        files.append({"name": label, "size": n, "paddedSize": padded_size(n), "chunks": len(chunks),
                      "chunkKey": chunk_key(secret, aid).hex(), "plaintext": b64u(plain),
                      "stored": b64u(stored), "reference": ref})

    # Negative stored files, all against the 4-chunk file (chunks 0-2 full, chunk 3 of 8,192 bytes),
    # written as segments of its stored bytes so that the file stays small: {"file", "start", "end"}
    # is stored[start:end] of that positive file, {"bytes"} is literal (base64url).
    base_name = "four_chunks_short_last"
    aid, secret, plain, header, chunks, ref = good[base_name]
    whole = header + b"".join(chunks)
    CS = CHUNK + TAG

    def span(start, end):
        return {"file": base_name, "start": start, "end": end}

    def lit(b: bytes):
        return {"bytes": b64u(b)}

    def at_chunk(i):  # offset of chunk i in the stored file
        return len(header) + i * CS

    def flipped(at):  # the whole file with one bit of byte `at` flipped
        return [span(0, at), lit(bytes([whole[at] ^ 0x01])), span(at + 1, len(whole))]

    def assemble(segments):
        out = b""
        for seg in segments:
            out += whole[seg["start"]:seg["end"]] if "file" in seg else base64.urlsafe_b64decode(seg["bytes"] + "==")
        return out

    def bad(name, segments, error, chunk=None, note="", reference=None, reference_changes=None):
        r = dict(reference or ref)
        if reference_changes:
            r.update(reference_changes)
        expect = {"ok": False, "error": error}
        if chunk is not None:
            expect["chunk"] = chunk
        stored_cases.append({"name": name, "note": note, "reference": r, "stored": segments, "expect": expect})

    bad("tag_bad_in_chunk_0", flipped(at_chunk(1) - 1), "attachment_bad_chunk", 0, "the last byte of chunk 0's tag flipped")
    bad("ciphertext_bad_in_chunk_2", flipped(at_chunk(2) + 100), "attachment_bad_chunk", 2,
        "refused at chunk 2: chunks 0 and 1 were already good")
    bad("tag_bad_in_last_chunk", flipped(len(whole) - 5), "attachment_bad_chunk", 3)
    bad("header_byte_flipped_reserved", flipped(7), "attachment_bad_header")
    bad("reordered_chunks_1_2", [span(0, at_chunk(1)), span(at_chunk(2), at_chunk(3)), span(at_chunk(1), at_chunk(2)),
                                 span(at_chunk(3), len(whole))],
        "attachment_bad_chunk", 1, "chunk 2 where chunk 1 belongs: its nonce is another index")
    bad("duplicated_chunk_1", [span(0, at_chunk(2)), span(at_chunk(1), at_chunk(2)), span(at_chunk(3), len(whole))],
        "attachment_bad_chunk", 2, "chunk 1 again in place of chunk 2")
    bad("truncated_mid_chunk", [span(0, len(whole) - 1000)], "attachment_truncated", note="the stream ends inside chunk 3")
    bad("truncated_at_chunk_boundary", [span(0, at_chunk(3))], "attachment_truncated",
        note="chunk 3, the final one, never comes")
    bad("truncated_in_header", [span(0, 5)], "attachment_truncated")
    bad("empty_stream", [], "attachment_truncated")
    bad("extended_one_byte", [span(0, len(whole)), lit(b"\x00")], "attachment_too_long", note="a byte after the final chunk")
    bad("extended_by_a_chunk", [span(0, len(whole)), span(at_chunk(3), len(whole))], "attachment_too_long")
    bad("digest_wrong", [span(0, len(whole))], "attachment_digest_mismatch",
        reference_changes={"sha256": hashlib.sha256(b"another file").hexdigest()},
        note="every chunk opens; the SHA-256 of the stored bytes is not the reference's")
    bad("header_version_2", [span(0, 4), lit(b"\x02"), span(5, len(whole))], "attachment_bad_header")
    bad("header_chunk_size_other", [span(0, 5), lit(b"\x0f"), span(6, len(whole))], "attachment_bad_header")
    bad("header_magic_wrong", [lit(b"SOTB"), span(4, len(whole))], "attachment_bad_header")
    bad("key_other", [span(0, len(whole))], "attachment_bad_chunk", 0, reference_changes={"key": derived("other-key").hex()})
    bad("id_other", [span(0, len(whole))], "attachment_bad_chunk", 0,
        reference_changes={"id": derived("other-id", 16).hex()},
        note="the id is in the AAD: the same bytes under another id do not open")
    for case in stored_cases:
        if case["name"] == "digest_wrong" or case["name"].startswith("key_") or case["name"].startswith("id_"):
            continue
        # Every case above refuses before its digest would: the digest is the reference's.
        assert assemble(case["stored"]) != whole or case["name"] == "digest_wrong"

    # A sender that broke the rules: valid AEAD, wrong padding or final flags, the digest its
    # own. Against the 2-chunk file (chunk 1 holds 1 byte of file and 4,095 of padding).
    aid2, secret2, plain2, _, _, ref2 = good["chunk_plus_one"]
    pad2 = bytes(padded_size(len(plain2)) - len(plain2))

    def rule_breaker(name, error, chunk, note, plain_, aid_, secret_, ref_, **kw):
        h, c = seal_chunks(plain_, aid_, secret_, **kw)
        s = h + b"".join(c)
        r = dict(ref_, sha256=hashlib.sha256(s).hexdigest())
        stored_cases.append({"name": name, "note": note, "reference": r, "stored": [lit(s)],
                             "expect": {"ok": False, "error": error, "chunk": chunk}})

    rule_breaker("padding_not_zero", "attachment_bad_padding", 1, "the last padding byte is 0x01",
                 plain2, aid2, secret2, ref2, pad=pad2[:-1] + b"\x01")
    rule_breaker("final_flag_missing", "attachment_bad_chunk", 1, "the last chunk sealed as not final",
                 plain2, aid2, secret2, ref2, finals=[False, False])
    rule_breaker("final_flag_early", "attachment_bad_chunk", 0,
                 "chunk 0 sealed as final: a stream cut after it would look whole",
                 plain2, aid2, secret2, ref2, finals=[True, True])
    aid5, secret5, plain5, _, _, ref5 = good["block_plus_one"]
    rule_breaker("padding_not_zero_first_byte", "attachment_bad_padding", 0, "the byte right after the file is 0xff",
                 plain5, aid5, secret5, ref5, pad=b"\xff" + bytes(8192 - 4097 - 1))

    # References: the JSON content of a sotto/attachment:1.0 message.
    base = dict(good["chunk_plus_one"][5])
    thumb_png = PNG + derived("thumb", 200)
    thumb_jpeg = JPEG + derived("thumb-jpeg", 300)

    def ref_case(name, value, ok, note=""):
        raw = value if isinstance(value, bytes) else json.dumps(value, separators=(",", ":")).encode()
        references.append({"name": name, "note": note, "content": b64u(raw),
                           "expect": {"ok": True} if ok else {"ok": False, "error": "malformed_message"}})

    def changed(**kw):
        r = dict(base)
        for k, v in kw.items():
            if v is None:
                r.pop(k, None)
            else:
                r[k] = v
        return r

    ref_case("plain_ok", base, True)
    ref_case("caption_and_png_thumbnail_ok", changed(caption="Ann's cat 🐈", thumbnail=b64u(thumb_png)), True)
    ref_case("jpeg_thumbnail_16384_ok", changed(thumbnail=b64u(JPEG + derived("big-thumb", 16384 - 3))), True)
    ref_case("max_size_ok", changed(size=MAX_SIZE, length=stored_length(MAX_SIZE)), True)
    ref_case("empty_file_ok", changed(size=0, length=stored_length(0)), True)
    ref_case("unknown_key_ignored_ok", changed(future={"x": [1, 2]}), True)
    ref_case("hostile_name_ok", changed(name="../../.bashrc\u0000\u202e" + "x" * 900), True,
             "a hostile name is carried as it is; saving makes it safe (§6)")
    ref_case("caption_null_ok", changed(caption=None) | {"caption": None}, True, "null is absent")
    ref_case("not_json", b"\xff{", False)
    ref_case("not_object", [base], False)
    ref_case("empty_object", {}, False)
    for key_name in ["id", "size", "length", "sha256", "key", "name", "mediaType"]:
        ref_case(f"missing_{key_name}", changed(**{key_name: None}), False)
    ref_case("id_uppercase", changed(id=base["id"].upper()), False)
    ref_case("id_short", changed(id=base["id"][:30]), False)
    ref_case("key_short", changed(key=base["key"][:62]), False)
    ref_case("sha256_not_hex", changed(sha256="z" * 64), False)
    ref_case("size_over_limit", changed(size=MAX_SIZE + 1, length=stored_length(MAX_SIZE + 1)), False)
    ref_case("size_negative", changed(size=-1), False)
    ref_case("size_fraction", changed(size=65537.5), False)
    ref_case("size_exponent", changed(size=6.5537e4), False, "an integer written with an exponent is not one")
    ref_case("size_string", changed(size="65537"), False)
    ref_case("length_not_for_size", changed(length=base["length"] + 16), False)
    ref_case("length_of_other_size", changed(length=stored_length(300_000)), False)
    ref_case("name_empty", changed(name=""), False)
    ref_case("name_1025_bytes", changed(name="n" * 1025), False)
    ref_case("name_1024_bytes_ok", changed(name="é" * 512), True)
    ref_case("name_not_string", changed(name=7), False)
    ref_case("media_type_uppercase", changed(mediaType="image/JPEG"), False)
    ref_case("media_type_parameters", changed(mediaType="text/plain; charset=utf-8"), False)
    ref_case("media_type_no_slash", changed(mediaType="jpeg"), False)
    ref_case("media_type_two_slashes", changed(mediaType="image/jpeg/x"), False)
    ref_case("media_type_128_bytes", changed(mediaType="a/" + "b" * 126), False)
    ref_case("media_type_127_bytes_ok", changed(mediaType="a/" + "b" * 125), True)
    ref_case("caption_empty", changed(caption=""), False)
    ref_case("caption_65537_bytes", changed(caption="c" * 65537), False)
    ref_case("caption_65536_bytes_ok", changed(caption="c" * 65536), True)
    ref_case("thumbnail_16385_bytes", changed(thumbnail=b64u(JPEG + derived("huge-thumb", 16385 - 3))), False)
    ref_case("thumbnail_not_an_image", changed(thumbnail=b64u(b"GIF89a" + bytes(100))), False,
             "only PNG and JPEG signatures")
    ref_case("thumbnail_on_pdf", changed(mediaType="application/pdf", thumbnail=b64u(thumb_png)), False,
             "a thumbnail only for an image/ media type")
    ref_case("thumbnail_bad_base64", changed(thumbnail="!!!!"), False)
    ref_case("thumbnail_empty", changed(thumbnail=""), False)

    names = [
        ("photo.jpg", "photo.jpg"), ("../../etc/passwd", "_.._etc_passwd"), ("..", "attachment"), (".", "attachment"),
        (".bashrc", "bashrc"), ("...hidden", "hidden"), (" . x", "x"), ("a/b\\c", "a_b_c"),
        ("evil\u202egpj.exe", "evil_gpj.exe"), ("tab\there\nnew", "tab_here_new"), ("nul\u0000byte", "nul_byte"),
        ("del\u007f\u009bx", "del__x"), ("trailing  ", "trailing"), ("/", "_"), ("名前.txt", "名前.txt"),
        ("x" * 1000, "x" * 255), ("y" * 996 + ".jpeg", "y" * 250 + ".jpeg"),
        ("z" * 990 + "." + "e" * 20, "z" * 255), ("é" * 500, "é" * 127),
        ("é" * 300 + ".pdf", "é" * 125 + ".pdf"), ("." * 1000, "attachment"),
        ("w" * 254 + " " + "v" * 10, "w" * 254), ("." + " " * 400 + "k", "k"),
    ]
    for raw, expected in names:
        assert safe_name(raw) == expected, (raw, safe_name(raw), expected)
    name_cases = [{"name": raw, "safe": expected} for raw, expected in names]

    padding = [{"size": n, "paddedSize": padded_size(n), "chunks": chunk_count(n), "storedLength": stored_length(n)}
               for n in [0, 1, 1024, 4095, 4096, 4097, 65_535, 65_536, 65_537, 131_071, 131_072, 131_073,
                         262_143, 1_048_576, 1_048_577, 26_214_400, 26_214_401, 67_108_864, 67_108_865,
                         100_000_000, MAX_SIZE]]

    for f in files:
        assert read(f["reference"], base64.urlsafe_b64decode(f["stored"] + "==")) == base64.urlsafe_b64decode(f["plaintext"] + "==")
    for case in stored_cases:
        raw = b""
        for seg in case["stored"]:
            raw += whole[seg["start"]:seg["end"]] if "file" in seg else base64.urlsafe_b64decode(seg["bytes"] + "==")
        assert read(case["reference"], raw) == (case["expect"]["error"], case["expect"].get("chunk")), case["name"]

    out = {
        "spec": "docs/protocol/attachments.md",
        "made_with": "pyca/cryptography and hashlib (make_attachment_vectors.py)",
        "header": HEADER.hex(), "chunkSize": CHUNK, "maxSize": MAX_SIZE,
        "padding": padding, "files": files, "stored": stored_cases, "references": references,
        "fileNames": name_cases,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
