#!/usr/bin/env python3
"""Makes join-refusal-v1.json: test vectors for docs/protocol/join-refusal.md (the creator's
answer to a join it refuses), written from that page and PROTOCOL.md with pyca/cryptography only
(the envelope and signature helpers of make_body_vectors.py, itself independent of Sotto's
Swift code).

usage: make_join_refusal_vectors.py > join-refusal-v1.json

The recipient of every case is a device whose join is pending: it holds the conversation as
`pendingJoin` with the creator Cora as a member (the key its invite named) and the join
request it sent, `joinRequestId`. Each case is a refusal push from Cora (or from a stranger)
and what the recipient must do: record it (`expect.ok`, with the reason it shows) or refuse
it with an ack error code, writing nothing.
"""
import json, os, sys, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_body_vectors as base  # noqa: E402

base.SEED = b"sotto join-refusal-v1 vectors"
CONTENT_TYPE = "sotto/join_refused:1.0"


def main() -> int:
    recipient, cora, stranger = base.key("recipient"), base.key("cora"), base.key("stranger")
    client_id = str(uuid.UUID(bytes=base.derived("clientId")[:16], version=4))
    cid = base.derived("conversation")[:16].hex()
    topic = f"/sotto/1/c/{cid}"
    join_request_id = base.derived("join-request")[:16].hex()
    other_request_id = base.derived("other-join-request")[:16].hex()
    counter = [0]
    cases = []

    def add(name, content: bytes, *, signer=cora, expect, note="", show_topic=False):
        counter[0] += 1
        mid = base.derived(f"refusal-{counter[0]}")[:16].hex()
        m = base.sign(signer, mid, cid, 1763760000000 + counter[0], CONTENT_TYPE, content,
                      fallback="Your request to join was refused")
        envelope = base.seal_envelope(json.dumps(m, separators=(",", ":")).encode(), recipient.public_key(), client_id, topic)
        data = {"envelope": base.b64u(envelope)}
        if show_topic:
            data = {"topic": topic, **data}
        payload = json.dumps({"version": 1, "clientId": client_id, "notificationData": data, "apiJWT": None},
                             separators=(",", ":"))
        assert len(payload.encode()) <= 4096, (name, len(payload.encode()))
        cases.append({"name": name, "note": note, "payload": payload, "content": base.b64u(content), "expect": expect})

    def ok(reason):
        return {"ok": True, "reason": reason}

    def err(code):
        return {"ok": False, "error": code}

    def js(value) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()

    add("revoked", js({"joinRequestId": join_request_id, "reason": "revoked"}), expect=ok("revoked"),
        note="as Sotto sends it: no topic in the push (PROTOCOL 1.1), the recipient's one conversation")
    for reason in ["full", "used_up", "expired", "bad_secret", "unknown_invite"]:
        add(reason, js({"joinRequestId": join_request_id, "reason": reason}), expect=ok(reason), show_topic=True)
    add("unknown_reason_is_other", js({"joinRequestId": join_request_id, "reason": "too_late"}), expect=ok("other"),
        note="a well-formed reason this device does not know: recorded, shown as other")
    add("unknown_keys_ignored", js({"reason": "revoked", "joinRequestId": join_request_id, "detail": "ignored", "x": [1]}),
        expect=ok("revoked"))
    add("stranger", js({"joinRequestId": join_request_id, "reason": "revoked"}), signer=stranger,
        expect=err("unknown_sender"), note="signed by someone who is not the creator the invite named")
    add("other_join_request", js({"joinRequestId": other_request_id, "reason": "revoked"}), expect=err("unknown_message"),
        note="signed by the creator, but for a join request this device did not send")
    add("not_json", b"\xff\x00garbage", expect=err("malformed_message"))
    add("not_an_object", js([join_request_id, "revoked"]), expect=err("malformed_message"))
    add("id_missing", js({"reason": "revoked"}), expect=err("malformed_message"))
    add("id_uppercase", js({"joinRequestId": join_request_id.upper(), "reason": "revoked"}), expect=err("malformed_message"))
    add("id_short", js({"joinRequestId": join_request_id[:30], "reason": "revoked"}), expect=err("malformed_message"))
    add("reason_missing", js({"joinRequestId": join_request_id}), expect=err("malformed_message"))
    add("reason_not_a_token", js({"joinRequestId": join_request_id, "reason": "Revoked!"}), expect=err("malformed_message"))
    add("reason_escape", js({"joinRequestId": join_request_id, "reason": "\u001b[31mrevoked"}), expect=err("malformed_message"),
        note="a terminal escape: never stored, never printed")
    add("reason_empty", js({"joinRequestId": join_request_id, "reason": ""}), expect=err("malformed_message"))
    add("reason_too_long", js({"joinRequestId": join_request_id, "reason": "r" * 33}), expect=err("malformed_message"))
    add("reason_not_a_string", js({"joinRequestId": join_request_id, "reason": 3}), expect=err("malformed_message"))

    out = {
        "spec": "docs/protocol/join-refusal.md", "made_with": "pyca/cryptography (make_join_refusal_vectors.py)",
        "recipient": {"privateKey": base.priv_hex(recipient), "publicKey": base.compressed(recipient.public_key()).hex(),
                      "inboxId": base.inbox_id(recipient), "clientId": client_id, "conversationId": cid, "topic": topic},
        "members": [
            {"inboxId": base.inbox_id(recipient), "publicKey": base.compressed(recipient.public_key()).hex(), "profileName": "Robin"},
            {"inboxId": base.inbox_id(cora), "publicKey": base.compressed(cora.public_key()).hex(), "profileName": "Cora"},
        ],
        "creatorInboxId": base.inbox_id(cora),
        "joinRequestId": join_request_id,
        "cases": cases,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
