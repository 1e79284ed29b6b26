import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/body-v1.json (made by a second implementation of
/// docs/protocol/bodies.md) through the library, as the worker opens it: payload, body,
/// keystore lookup, envelope, signature, reference, sealed body, inner content; then the
/// membership check the store writer makes, here against the vector's member list.
@Suite("Body vectors")
struct BodyVectorTests {
    @Test("Body vector case", arguments: Vectors.bodyCaseNames)
    func bodyVectorCase(name: String) throws {
        let file = try Vectors.loadBodies()
        let vector = try #require(file.cases.first { $0.name == name })
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let keystore = try Keystore(directory: temp.path + "/keystore", environment: [:], createIfMissing: true)
        try keystore.save(try file.recipient.identity())

        let outcome = Result { () throws(PushError) -> OpenedPush in
            let payload = try PushPayload.decode(vector.payload)
            // What the worker reads off the stream: exactly the stated length, or less.
            let body = payload.body.flatMap { hint in
                (vector.body ?? []).count >= Int(hint.length) ? Array((vector.body ?? []).prefix(Int(hint.length))) : nil
            }
            let opened = try PushOpener.open(payload, body: body) { (clientId) throws(KeystoreError) in
                try keystore.identity(clientId: clientId)
            }
            guard file.members.contains(where: { $0.inboxId == opened.message.senderInboxId }) else {
                throw PushError(.unknownSender, "sender is not a member")
            }
            return opened
        }
        switch (vector.expect, outcome) {
        case (.error(let code), .failure(let error)):
            #expect(error.code.rawValue == code, "\(name): \(error.detail)")
        case (.error(let code), .success(let opened)):
            Issue.record("\(name): expected \(code), got message \(opened.message.id)")
        case (.ok, .failure(let error)):
            Issue.record("\(name): expected a message, got \(error)")
        case (.ok(let expected), .success(let opened)):
            #expect(opened.message.id == expected["id"]?.string)
            #expect(opened.message.senderInboxId == expected["senderInboxId"]?.string)
            #expect(opened.message.sentAtMs == expected["sentAtMs"]?.int64)
            #expect(opened.contentType == expected["contentType"]?.string)
            #expect(opened.contentBytes == Base64URL.decode(expected["content"]?.string ?? "-"))
            #expect(opened.message.contentType == ContentType.body)
            #expect(opened.body != nil)
        }
    }

    @Test("The file's sealed body opens, and sealing its content again gives the same bytes")
    func sealedBodyVector() throws {
        let sealed = try #require(try Vectors.loadBodies().sealedBody)
        #expect(try SealedBody.open(sealed.sealed, id: sealed.id, key: sealed.key) == sealed.content)
        #expect(Hex.encode(SHA256.hash(sealed.sealed)) == sealed.sha256)
        // Deterministic given id and key: the zero nonce, the AAD and the padding are all fixed.
        #expect(SealedBody.seal(sealed.content, id: sealed.id, key: sealed.key).sealed == sealed.sealed)
    }

    @Test("The vectors cover every body error and the ok kinds")
    func coverage() throws {
        let file = try Vectors.loadBodies()
        let codes = Set(file.cases.compactMap { if case .error(let code) = $0.expect { code } else { nil } })
        #expect(codes.isSuperset(of: ["body_missing", "body_mismatch", "malformed_payload", "payload_too_large",
                                      "malformed_message", "unknown_sender"]))
        #expect(file.cases.filter { if case .ok = $0.expect { true } else { false } }.count >= 4)
    }
}

@Suite("Sealed bodies")
struct SealedBodyTests {
    @Test("the tag the wire's body sizes count is the one ChaCha20-Poly1305 makes")
    func tagSize() {
        #expect(BodySize.tagBytes == ChaCha20Poly1305.tagByteCount)
        #expect(BodySize.minSealedBytes == BodySize.blockBytes + ChaCha20Poly1305.tagByteCount)
    }

    @Test("Round trip at the edges of the padding", arguments: [1, 4091, 4092, 4093, 8188, 65_536, BodySize.maxContentBytes])
    func roundTrip(count: Int) throws {
        let content = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let body = SealedBody.seal(content)
        #expect(body.sealed.count == BodySize.paddedLength(contentCount: count) + 16)
        #expect(BodySize.isValidLength(Int64(body.sealed.count)))
        let reference = BodyReference(body, contentType: ContentType.text, fallback: nil)
        let back = try BodyReference.decode(reference.encode())
        #expect(back == reference)
        #expect(try back.open(body.sealed, hint: reference.hint) == content)
    }

    @Test("A body that does not match its reference is body_mismatch")
    func mismatches() throws {
        let body = SealedBody.seal(Array("the plan".utf8))
        let reference = BodyReference(body, contentType: ContentType.text, fallback: nil)
        var flipped = body.sealed
        flipped[17] ^= 1
        let otherKey = BodyReference(id: reference.id, length: reference.length, sha256: reference.sha256,
                                     key: Hex.encode(SecureRandom.bytes(32)), contentType: ContentType.text, fallback: nil)
        let cases: [(BodyReference, [UInt8], BodyHint)] = [
            (reference, flipped, reference.hint),
            (reference, Array(body.sealed.dropLast()), reference.hint),
            (reference, body.sealed, BodyHint(id: Hex.encode(SecureRandom.bytes(16)), length: reference.length)),
            (otherKey, body.sealed, reference.hint),
        ]
        for (ref, bytes, hint) in cases {
            #expect(throws: PushError.self) { try ref.open(bytes, hint: hint) }
            do { _ = try ref.open(bytes, hint: hint) } catch { #expect(error.code == .bodyMismatch) }
        }
        // The same body under another id: the AAD binds the id.
        #expect(throws: PushError.self) { try SealedBody.open(body.sealed, id: SecureRandom.bytes(16), key: body.key) }
    }

    @Test("Garbage references are malformed_message", arguments: [
        "", "[]", "{}", "null", #"{"id":"00","length":4112,"sha256":"","key":"","contentType":"x"}"#,
        #"{"id":"0123456789abcdef0123456789abcdef","length":4111,"sha256":"\#(String(repeating: "a", count: 64))","key":"\#(String(repeating: "b", count: 64))","contentType":"xmtp.org/text:1.0"}"#,
        #"{"id":"0123456789abcdef0123456789abcdef","length":4112,"sha256":"\#(String(repeating: "A", count: 64))","key":"\#(String(repeating: "b", count: 64))","contentType":"xmtp.org/text:1.0"}"#,
        #"{"id":"0123456789abcdef0123456789abcdef","length":4112,"sha256":"\#(String(repeating: "a", count: 64))","key":"\#(String(repeating: "b", count: 64))","contentType":"sotto/body:1.0"}"#,
        #"{"id":"0123456789abcdef0123456789abcdef","length":4112,"sha256":"\#(String(repeating: "a", count: 64))","key":"\#(String(repeating: "b", count: 64))","contentType":"has space"}"#,
        #"{"id":"0123456789abcdef0123456789abcdef","length":4112,"sha256":"\#(String(repeating: "a", count: 64))","key":"\#(String(repeating: "b", count: 64))","contentType":"x/y:1","fallback":"\#(String(repeating: "f", count: 257))"}"#,
        #"{"id":"0123456789abcdef0123456789abcdef","length":"4112","sha256":"\#(String(repeating: "a", count: 64))","key":"\#(String(repeating: "b", count: 64))","contentType":"x/y:1"}"#,
    ])
    func garbageReferences(text: String) {
        do {
            _ = try BodyReference.decode(Array(text.utf8))
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .malformedMessage)
        }
    }

    @Test("Random bytes never open and never crash")
    func randomBytes() {
        for round in 0..<200 {
            let length = [0, 1, 16, 4111, 4112, 8208][round % 6]
            let bytes = SecureRandom.bytes(length)
            #expect(throws: PushError.self) { try SealedBody.open(bytes, id: SecureRandom.bytes(16), key: SecureRandom.bytes(32)) }
            _ = try? BodyReference.decode(bytes)
        }
    }

    @Test("The push's body hint: garbage is refused with the §7 code", arguments: [
        (#"{"id":"0123456789abcdef0123456789abcdef","length":4112}"#, "ok"),
        (#"{"id":"0123456789abcdef0123456789abcdef","length":4113}"#, "malformed_payload"),
        (#"{"id":"0123456789abcdef0123456789abcdef","length":12304}"#, "malformed_payload"),
        (#"{"id":"0123456789abcdef0123456789abcdef","length":16400}"#, "ok"),
        (#"{"id":"0123456789abcdef0123456789abcdef","length":16}"#, "malformed_payload"),
        (#"{"id":"0123456789abcdef0123456789abcdef","length":1048592}"#, "payload_too_large"),
        (#"{"id":"0123456789abcdef0123456789abcdef","length":-4080}"#, "malformed_payload"),
        (#"{"id":"0123456789ABCDEF0123456789ABCDEF","length":4112}"#, "malformed_payload"),
        (#"{"length":4112}"#, "malformed_payload"),
        (#""body""#, "malformed_payload"),
        (#"[]"#, "malformed_payload"),
        (#"null"#, "ok"),
    ])
    func bodyHints(hint: String, expected: String) {
        let payload = #"{"version":1,"clientId":"3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10","notificationData":{"envelope":"AQ","body":\#(hint)}}"#
        do {
            let decoded = try PushPayload.decode(Array(payload.utf8))
            #expect(expected == "ok", "\(hint)")
            if hint != "null" { #expect(decoded.body?.id == "0123456789abcdef0123456789abcdef" && [4112, 16400].contains(decoded.body?.length)) }
            #expect(try PushPayload.decode(decoded.encode()) == decoded)
        } catch {
            #expect(error.code.rawValue == expected, "\(hint)")
        }
    }
}
