import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// What a real daemon *sends* for a message that goes by reference, read by an independent
/// implementation: `../shared/tools/open_push.py` opens the push (PROTOCOL v1, pyca/cryptography),
/// and a few lines of Python written from docs/protocol/bodies.md §3 open the body.
@Suite("Messaging: a by-reference push as an independent reader sees it", .serialized)
struct ByReferenceWireTests {
    /// bodies.md §3, from the page alone: check the hash, open with the key, the zero nonce
    /// and the AAD, check the minimal zero padding, print C as hex.
    static let openBody = """
        import hashlib, json, sys
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
        ref = json.loads(sys.argv[1])
        S = open(sys.argv[2], "rb").read()
        assert len(S) == ref["length"], "length"
        assert (len(S) - 16) // 4096 in (1, 2, 4, 8, 16, 32, 64, 128, 255) and len(S) % 4096 == 16, "a size bucket"
        assert hashlib.sha256(S).hexdigest() == ref["sha256"], "sha256"
        P = ChaCha20Poly1305(bytes.fromhex(ref["key"])).decrypt(b"\\0" * 12, S, b"sotto/body/v1" + bytes.fromhex(ref["id"]))
        n = int.from_bytes(P[:4], "big")
        assert len(P) == 4096 * min(b for b in (1, 2, 4, 8, 16, 32, 64, 128, 255) if b >= (4 + n + 4095) // 4096), "minimal padding"
        assert P[4 + n:] == b"\\0" * (len(P) - 4 - n), "zero padding"
        sys.stdout.write(P[4:4 + n].hex())
        """

    @Test("open_push.py opens the push: a signed sotto/body:1.0 whose reference matches the push's body and bodies.md §4; Python opens the body to the text")
    func independentReaderOpensIt() throws {
        guard FileManager.default.fileExists(atPath: IndependentReader.toolPath) else {
            Issue.record("\(IndependentReader.toolPath) is missing")
            return
        }
        let tmp = try TemporaryDirectory(prefix: "bw")
        let alice = try Device.start("alice", in: tmp.path)
        defer { alice.stop() }
        let trip = try require(try alice.json(["new", "--name", "Wire"])["conversationId"] as? String)
        // A member whose device never answers: its push and the body stay in alice's database.
        let remote = try RemoteMember.join(conversationId: trip, databasePath: alice.group.databasePath)
        let text = String(repeating: "ünïcödé and \"quotes\"\n", count: 2_000)   // 50,000 bytes
        let sent = try require(try alice.json(["send", trip, text])["messageId"] as? String)

        let payload = try require(try alice.query("SELECT payload FROM outbox WHERE messageId = ? AND memberInboxId = ?",
                                                  [.text(sent), .text(remote.identity.inboxId)]).first?.blob(0), "payload")
        let sealed = try require(try alice.query("SELECT sealed FROM outbox_body WHERE messageId = ?", [.text(sent)]).first?.blob(0),
                                 "sealed body")
        #expect(payload.count <= PushPayload.maxBytes)

        let message = try IndependentReader.open(payload, recipient: remote.identity).fields
        #expect(message["contentType"] as? String == "sotto/body:1.0")
        #expect(message["id"] as? String == sent)
        #expect(message["fallback"] as? String == "This message is too long for this version of Sotto.")

        // The reference (§4): exactly its keys, each within its rule, and the push's body (§5) agrees.
        let content = try require(Base64URL.decode(try require(message["content"] as? String)), "content")
        let reference = try require(try JSONSerialization.jsonObject(with: Data(content)) as? [String: Any], "reference")
        #expect(Set(reference.keys).isSubset(of: ["id", "length", "sha256", "key", "contentType", "fallback"]))
        let hex = { (value: Any?, count: Int) -> Bool in
            guard let text = value as? String else { return false }
            return text.count == count && text.allSatisfy { "0123456789abcdef".contains($0) }
        }
        #expect(hex(reference["id"], 32) && hex(reference["sha256"], 64) && hex(reference["key"], 64))
        #expect(reference["contentType"] as? String == ContentType.text)
        #expect(reference["length"] as? Int == sealed.count)
        let push = try require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any], "push")
        let hint = try require((push["notificationData"] as? [String: Any])?["body"] as? [String: Any], "notificationData.body")
        #expect(hint["id"] as? String == reference["id"] as? String)
        #expect(hint["length"] as? Int == sealed.count)

        // The body (§3), opened by Python from the reference alone.
        let bodyPath = tmp.path + "/body.bin"
        try Data(sealed).write(to: URL(fileURLWithPath: bodyPath))
        let referenceJSON = String(decoding: content, as: UTF8.self)
        let body = try ChildProcess.run("/usr/bin/env", ["python3", "-c", Self.openBody, referenceJSON, bodyPath])
        #expect(body.status == 0, "\(body.stderr)")
        #expect(body.stdout == Hex.encode(Array(text.utf8)))
    }
}
