#!/usr/bin/env python3
"""Makes receipt-v1.json: test vectors for docs/protocol/receipts.md (delivery receipts),
written from that page and PROTOCOL.md with pyca/cryptography only (the envelope and signature
helpers of make_body_vectors.py, itself independent of Sotto's Swift code).

usage: make_receipt_vectors.py > receipt-v1.json

The recipient of every case is the device that SENT messages to member Alice: `sent` lists
the ids of its messages that have a push to Alice. Each case is a receipt push from Alice
(or from a stranger) and what the recipient must do: apply it (`expect.ok`, with the
decoded `delivered` and `failed` lists) or refuse it with an ack error code.
"""
import json, os, sys, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_body_vectors as base  # noqa: E402

base.SEED = b"sotto receipt-v1 vectors"
MAX_ENTRIES = 20


def main() -> int:
    recipient, alice, stranger = base.key("recipient"), base.key("alice"), base.key("stranger")
    client_id = str(uuid.UUID(bytes=base.derived("clientId")[:16], version=4))
    cid = base.derived("conversation")[:16].hex()
    topic = f"/sotto/1/c/{cid}"
    sent = [base.derived(f"sent-{i}")[:16].hex() for i in range(MAX_ENTRIES + 1)]
    never_sent = base.derived("never-sent")[:16].hex()
    counter = [0]
    cases = []

    def add(name, content: bytes, *, signer=alice, expect, note="", show_topic=True):
        counter[0] += 1
        mid = base.derived(f"receipt-{counter[0]}")[:16].hex()
        m = base.sign(signer, mid, cid, 1763760000000 + counter[0], "sotto/receipt:1.0", content)
        envelope = base.seal_envelope(json.dumps(m, separators=(",", ":")).encode(), recipient.public_key(), client_id, topic)
        data = {"envelope": base.b64u(envelope)}
        if show_topic:
            data = {"topic": topic, **data}
        payload = json.dumps({"version": 1, "clientId": client_id, "notificationData": data, "apiJWT": None},
                             separators=(",", ":"))
        assert len(payload.encode()) <= 4096, (name, len(payload.encode()))
        cases.append({"name": name, "note": note, "payload": payload, "content": base.b64u(content), "expect": expect})

    def ok(delivered, failed=()):
        return {"ok": True, "delivered": list(delivered), "failed": [{"id": i, "error": e} for i, e in failed]}

    def err(code):
        return {"ok": False, "error": code}

    def js(value) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()

    add("delivered_one", js({"delivered": [sent[0]]}), expect=ok([sent[0]]), show_topic=False,
        note="as Sotto sends it: no topic in the push (PROTOCOL 1.1), the recipient's one conversation")
    add("delivered_and_failed", js({"delivered": [sent[0], sent[1]], "failed": [{"id": sent[2], "error": "body_missing"}]}),
        expect=ok([sent[0], sent[1]], [(sent[2], "body_missing")]))
    add("failed_only", js({"failed": [{"id": sent[3], "error": "body_mismatch"}]}), expect=ok([], [(sent[3], "body_mismatch")]))
    add("unknown_keys_ignored", js({"delivered": [sent[4]], "readAt": 5, "x": {"y": [1]}}), expect=ok([sent[4]]))
    add("largest", js({"failed": [{"id": i, "error": "e" * 32} for i in sent[:MAX_ENTRIES]]}),
        expect=ok([], [(i, "e" * 32) for i in sent[:MAX_ENTRIES]]), note="20 entries, 32-byte codes: still one push")
    add("too_many", js({"delivered": sent[:MAX_ENTRIES + 1]}), expect=err("malformed_message"))
    add("too_many_together", js({"delivered": sent[:11], "failed": [{"id": i, "error": "x"} for i in sent[11:21]]}),
        expect=err("malformed_message"), note="21 entries across both lists")
    add("empty", js({}), expect=err("malformed_message"))
    add("empty_lists", js({"delivered": [], "failed": []}), expect=err("malformed_message"))
    add("not_an_object", js([sent[0]]), expect=err("malformed_message"))
    add("not_json", b"\xff\x00garbage", expect=err("malformed_message"))
    add("id_uppercase", js({"delivered": [sent[0].upper()]}), expect=err("malformed_message"))
    add("id_short", js({"delivered": [sent[0][:30]]}), expect=err("malformed_message"))
    add("id_twice", js({"delivered": [sent[0]], "failed": [{"id": sent[0], "error": "body_missing"}]}),
        expect=err("malformed_message"))
    add("error_not_a_code", js({"failed": [{"id": sent[0], "error": "Body Missing!"}]}), expect=err("malformed_message"))
    add("error_too_long", js({"failed": [{"id": sent[0], "error": "e" * 33}]}), expect=err("malformed_message"))
    add("error_missing", js({"failed": [{"id": sent[0]}]}), expect=err("malformed_message"))
    add("delivered_not_a_list", js({"delivered": sent[0]}), expect=err("malformed_message"))
    add("never_sent_id", js({"delivered": [sent[0], never_sent]}), expect=err("unknown_message"),
        note="one id the recipient never sent to Alice: the whole receipt is refused, nothing applied")
    add("stranger", js({"delivered": [sent[0]]}), signer=stranger, expect=err("unknown_sender"))

    out = {
        "spec": "docs/protocol/receipts.md", "made_with": "pyca/cryptography (make_receipt_vectors.py)",
        "recipient": {"privateKey": base.priv_hex(recipient), "publicKey": base.compressed(recipient.public_key()).hex(),
                      "inboxId": base.inbox_id(recipient), "clientId": client_id, "conversationId": cid, "topic": topic},
        "members": [
            {"inboxId": base.inbox_id(recipient), "publicKey": base.compressed(recipient.public_key()).hex(), "profileName": "Robin"},
            {"inboxId": base.inbox_id(alice), "publicKey": base.compressed(alice.public_key()).hex(), "profileName": "Alice"},
        ],
        "sent": sent,
        "cases": cases,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
