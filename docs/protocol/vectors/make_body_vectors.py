#!/usr/bin/env python3
"""Makes body-v1.json: test vectors for docs/protocol/bodies.md (bodies by reference), written
from that page and PROTOCOL.md with pyca/cryptography only, independently of Sotto's Swift code.

usage: make_body_vectors.py > body-v1.json
Keys come from a fixed seed; ephemeral keys, nonces and ECDSA signatures are random, so two
runs give different (equally valid) files. The committed file is the one the tests load.
"""
import base64, hashlib, json, os, sys, uuid

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SEED = b"sotto body-v1 vectors"
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
BLOCK = 4096


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def derived(label: str) -> bytes:
    return hashlib.sha256(SEED + b"/" + label.encode()).digest()


def key(label: str):
    return ec.derive_private_key(int.from_bytes(derived(label), "big") % (N - 1) + 1, ec.SECP256K1())


def compressed(pub) -> bytes:
    return pub.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint)


def priv_hex(priv) -> str:
    return priv.private_numbers().private_value.to_bytes(32, "big").hex()


def inbox_id(priv) -> str:
    return hashlib.sha256(compressed(priv.public_key())).hexdigest()


# --- PROTOCOL §3 and §4 -------------------------------------------------------------------

def seal_envelope(plaintext: bytes, recipient_pub, client_id: str, topic: str) -> bytes:
    e = ec.generate_private_key(ec.SECP256K1())
    E, R = compressed(e.public_key()), compressed(recipient_pub)
    x = e.exchange(ec.ECDH(), recipient_pub)
    k = HKDF(algorithm=hashes.SHA256(), length=32, salt=E + R, info=b"sotto/envelope/v1").derive(x)
    nonce = os.urandom(12)
    aad = b"\x01" + E + client_id.encode() + topic.encode()
    return b"\x01" + E + nonce + ChaCha20Poly1305(k).encrypt(nonce, plaintext, aad)


def sign(signer, mid: str, cid: str, sent_at: int, content_type: str, content: bytes, fallback=None) -> dict:
    encoded = b64u(content)
    sender = inbox_id(signer)
    text = "".join(f + "\n" for f in ["sotto/message/v1", mid, cid, sender, str(sent_at), content_type, encoded])
    der = signer.sign(text.encode(), ec.ECDSA(hashes.SHA256()))
    r, s = utils.decode_dss_signature(der)
    if s > N // 2:
        s = N - s
    m = {"id": mid, "conversationId": cid, "senderInboxId": sender,
         "senderPublicKey": compressed(signer.public_key()).hex(), "sentAtMs": sent_at,
         "contentType": content_type, "content": encoded}
    if fallback is not None:
        m["fallback"] = fallback
    m["signature"] = r.to_bytes(32, "big").hex() + s.to_bytes(32, "big").hex()
    return m


# --- bodies.md §3 -------------------------------------------------------------------------

BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 255]  # blocks a padded body may have


def pad(c: bytes) -> bytes:
    blocks = -(-(4 + len(c)) // BLOCK)
    size = BLOCK * next(b for b in BUCKETS if b >= blocks)
    return len(c).to_bytes(4, "big") + c + bytes(size - 4 - len(c))


def seal_body(padded: bytes, body_id: bytes, k: bytes) -> bytes:
    return ChaCha20Poly1305(k).encrypt(bytes(12), padded, b"sotto/body/v1" + body_id)


def main() -> int:
    recipient = key("recipient")
    alice = key("alice")
    stranger = key("stranger")
    client_id = str(uuid.UUID(bytes=derived("clientId")[:16], version=4))
    cid = derived("conversation")[:16].hex()
    topic = f"/sotto/1/c/{cid}"
    counter = [0]

    def next_id() -> str:
        counter[0] += 1
        return derived(f"message-{counter[0]}")[:16].hex()

    cases = []

    def push(envelope_message: dict, body_hint=None, client=client_id) -> str:
        sealed = seal_envelope(json.dumps(envelope_message, separators=(",", ":")).encode(),
                               recipient.public_key(), client, topic)
        data = {"topic": topic, "envelope": b64u(sealed)}
        if body_hint is not None:
            data["body"] = body_hint
        return json.dumps({"version": 1, "clientId": client, "notificationData": data, "apiJWT": None},
                          separators=(",", ":"))

    def by_reference(name, content_type, c, *, signer=alice, note="", expect=None, fallback_inner=None,
                     mutate_body=None, ref_changes=None, hint_changes=None, padded=None, k=None,
                     body_bytes_override=None, no_hint=False):
        body_id = os.urandom(16)
        k = k or os.urandom(32)
        padded = padded if padded is not None else pad(c)
        sealed = seal_body(padded, body_id, k)
        ref = {"id": body_id.hex(), "length": len(sealed), "sha256": hashlib.sha256(sealed).hexdigest(),
               "key": k.hex(), "contentType": content_type}
        if fallback_inner is not None:
            ref["fallback"] = fallback_inner
        if ref_changes:
            ref.update(ref_changes)
            for drop in [key for key, value in ref_changes.items() if value is None]:
                del ref[drop]
        sent = sealed if mutate_body is None else mutate_body(sealed)
        if body_bytes_override is not None:
            sent = body_bytes_override
        mid = next_id()
        m = sign(signer, mid, cid, 1763760000000 + counter[0], "sotto/body:1.0",
                 json.dumps(ref, separators=(",", ":")).encode(),
                 "This message is too long for this version of Sotto.")
        hint = {"id": ref["id"], "length": ref["length"]}
        if hint_changes:
            hint.update(hint_changes)
        payload = push(m, None if no_hint else hint)
        assert len(payload.encode()) <= 4096, name
        if expect is None:
            expect = {"ok": True, "message": {"id": mid, "conversationId": cid, "senderInboxId": m["senderInboxId"],
                                              "senderPublicKey": m["senderPublicKey"], "sentAtMs": m["sentAtMs"],
                                              "contentType": content_type, "content": b64u(c)}}
        cases.append({"name": name, "note": note, "payload": payload, "body": b64u(sent), "expect": expect})

    def err(code):
        return {"ok": False, "error": code}

    text64k = ("0123456789abcdef" * 4096).encode()  # 65,536 bytes
    by_reference("text_64k_ok", "xmtp.org/text:1.0", text64k, note="the largest text: 65,536 bytes")
    by_reference("text_5000_ok", "xmtp.org/text:1.0", ("é" * 2500).encode(), note="two blocks of padding")
    by_reference("text_exact_block_ok", "xmtp.org/text:1.0", b"x" * 4092, note="4 + 4092 = one block exactly")
    by_reference("text_three_blocks_ok", "xmtp.org/text:1.0", b"z" * 9000,
                 note="4 + 9000 bytes take 3 blocks: padded to the 4-block size bucket (16,384 bytes)")
    by_reference("reply_long_quote_ok", "xmtp.org/reply:1.0",
                 json.dumps({"reference": "2c546b8b5273fadff1a7a700e4e40339", "text": "q" * 30000},
                            separators=(",", ":")).encode())
    by_reference("unknown_inner_with_fallback_ok", "example.org/poll:1.0", bytes(range(256)) * 20,
                 fallback_inner="A poll", note="an inner type the recipient does not know: shown by the reference's fallback")
    by_reference("body_missing_empty", "xmtp.org/text:1.0", b"hello " * 1000, body_bytes_override=b"",
                 expect=err("body_missing"), note="the push's LF, then end of stream")
    by_reference("body_missing_cut_short", "xmtp.org/text:1.0", b"hello " * 1000,
                 mutate_body=lambda s: s[:len(s) // 2], expect=err("body_missing"))
    by_reference("body_hash_mismatch", "xmtp.org/text:1.0", b"hello " * 1000,
                 mutate_body=lambda s: s[:100] + bytes([s[100] ^ 1]) + s[101:], expect=err("body_mismatch"))
    by_reference("body_wrong_key", "xmtp.org/text:1.0", b"hello " * 1000,
                 ref_changes={"key": os.urandom(32).hex()}, expect=err("body_mismatch"),
                 note="hash matches, the AEAD does not open")
    by_reference("body_padding_not_minimal", "xmtp.org/text:1.0", b"short",
                 padded=pad(b"short") + bytes(BLOCK), expect=err("body_mismatch"))
    by_reference("body_padding_not_zero", "xmtp.org/text:1.0", b"short",
                 padded=pad(b"short")[:-1] + b"\x01", expect=err("body_mismatch"))
    by_reference("body_length_prefix_too_big", "xmtp.org/text:1.0", b"short",
                 padded=(5000).to_bytes(4, "big") + pad(b"short")[4:], expect=err("body_mismatch"))
    by_reference("hint_id_differs", "xmtp.org/text:1.0", b"hello " * 1000,
                 hint_changes={"id": os.urandom(16).hex()}, expect=err("body_mismatch"))
    by_reference("reference_without_hint", "xmtp.org/text:1.0", b"hello " * 1000, no_hint=True,
                 body_bytes_override=b"", expect=err("body_mismatch"))
    by_reference("body_length_not_a_bucket", "xmtp.org/text:1.0", b"z" * 9000,
                 padded=len(b"z" * 9000).to_bytes(4, "big") + b"z" * 9000 + bytes(3 * BLOCK - 9004),
                 expect=err("malformed_payload"), note="padded to 3 whole blocks, not to a size bucket: length 12,304")
    by_reference("hint_length_not_aligned", "xmtp.org/text:1.0", b"hello " * 1000,
                 hint_changes={"length": 5000}, expect=err("malformed_payload"))
    by_reference("hint_length_over_limit", "xmtp.org/text:1.0", b"hello " * 1000,
                 hint_changes={"length": 1_044_496 + BLOCK}, body_bytes_override=b"", expect=err("payload_too_large"))
    by_reference("reference_missing_sha256", "xmtp.org/text:1.0", b"hello " * 1000,
                 ref_changes={"sha256": None}, expect=err("malformed_message"))
    by_reference("nested_reference", "sotto/body:1.0", b"{}" * 3000, expect=err("malformed_message"))
    by_reference("join_request_by_reference", "sotto/join_request:1.0", b"{}" * 3000, expect=err("malformed_message"))
    by_reference("text_over_64k", "xmtp.org/text:1.0", b"y" * 65537, expect=err("malformed_message"))
    by_reference("text_not_utf8", "xmtp.org/text:1.0", b"\xff\xfe" * 3000, expect=err("malformed_message"))
    by_reference("stranger_by_reference", "xmtp.org/text:1.0", b"hello " * 1000, signer=stranger,
                 expect=err("unknown_sender"))

    # A plain text push that claims a body: the message is not a reference.
    mid = next_id()
    m = sign(alice, mid, cid, 1763760000000 + counter[0], "xmtp.org/text:1.0", b"hi")
    fake = os.urandom(16).hex()
    cases.append({"name": "hint_without_reference", "note": "", "body": b64u(os.urandom(4112)),
                  "payload": push(m, {"id": fake, "length": 4112}), "expect": err("body_mismatch")})

    # §3 alone: one sealed body with everything needed to check it.
    body_id, k, c = derived("sealed-id")[:16], derived("sealed-key"), "Sotto body vector ✓".encode()
    sealed = seal_body(pad(c), body_id, k)
    out = {
        "spec": "docs/protocol/bodies.md", "made_with": "pyca/cryptography (make_body_vectors.py)",
        "recipient": {"privateKey": priv_hex(recipient), "publicKey": compressed(recipient.public_key()).hex(),
                      "inboxId": inbox_id(recipient), "clientId": client_id, "conversationId": cid, "topic": topic},
        "members": [
            {"inboxId": inbox_id(recipient), "publicKey": compressed(recipient.public_key()).hex(), "profileName": "Robin"},
            {"inboxId": inbox_id(alice), "publicKey": compressed(alice.public_key()).hex(), "profileName": "Alice"},
        ],
        "sealedBody": {"id": body_id.hex(), "key": k.hex(), "content": b64u(c), "sealed": b64u(sealed),
                       "sha256": hashlib.sha256(sealed).hexdigest()},
        "cases": cases,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
