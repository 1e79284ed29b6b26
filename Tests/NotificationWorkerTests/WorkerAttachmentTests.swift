import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Issue #35, second layer: every reference of docs/protocol/vectors/attachment-v1.json
/// (made by a second implementation, `make_attachment_vectors.py`) as a member's
/// `sotto/attachment:1.0` message through the real worker: a valid one is stored as sent, a
/// refused one is `malformed_message` with nothing written (docs/protocol/attachments.md §3, §7).
@Suite("Worker attachment references")
struct WorkerAttachmentTests {
    /// The `references` of attachment-v1.json: name, content, whether it is valid.
    static func references() throws -> [(name: String, content: [UInt8], ok: Bool)] {
        let path = PackagePaths.root.appendingPathComponent("docs/protocol/vectors/attachment-v1.json").path
        let data = try #require(FileManager.default.contents(atPath: path))
        let root = try JSONParser.parse(Array(data), limits: .init(maxBytes: 16 << 20, maxDepth: 16))
        return try (root["references"]?.array ?? []).map { reference in
            (try #require(reference["name"]?.string), try #require(Base64URL.decode(reference["content"]?.string ?? "")),
             try #require(reference["expect"]?["ok"]?.bool as Bool?))
        }
    }

    @Test("each reference vector: stored when valid, malformed_message and nothing written when not")
    func referenceVectors() throws {
        let references = try Self.references()
        #expect(references.count == 47)
        #expect(references.contains { $0.ok } && references.contains { !$0.ok })
        let fixture = try WorkerFixture(vectors: try #require(try Vectors.load()))
        for (name, content, ok) in references {
            // Inline when it fits one push, else by reference (a 16 KiB thumbnail), as a sender does.
            let inline = try fixture.seal(contentType: ContentType.attachment, content: content,
                                          fallback: AttachmentReference.outerFallback)
            let fits = inline.payload.count <= PushPayload.maxBytes
            let reference = fixture.byReference(contentType: ContentType.attachment, content: content)
            let push = fits ? inline : reference.push
            let before = try fixture.tableContents()
            let ack = try WorkerRun.deliver(push.payload, body: fits ? nil : reference.body, mode: fits ? .payloadStdin : .acceptYes,
                                            fixture: fixture)
            if ok {
                #expect(ack == .ok(messageId: push.messageId, duplicate: false), "\(name): \(ack)")
                let row = try #require(try fixture.message(id: push.messageId), "\(name): not stored")
                #expect(row.contentType == ContentType.attachment && row.content == content, "\(name)")
            } else {
                #expect(WorkerRun.errorCode(ack) == PushErrorCode.malformedMessage.rawValue, "\(name): \(ack)")
                #expect(try fixture.tableContents() == before, "\(name): a refused reference wrote something")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.group.attachmentsPath), "the worker never writes a file")
    }

    @Test("a reference too large for one push (a long caption) travels by reference and is checked the same way")
    func byReference() throws {
        let fixture = try WorkerFixture(vectors: try #require(try Vectors.load()))
        let long = AttachmentReference(id: SecureRandom.bytes(16), size: 10, sha256: SecureRandom.bytes(32), key: SecureRandom.bytes(32),
                                       name: "minutes.pdf", mediaType: "application/pdf",
                                       caption: String(repeating: "c", count: 8_000))
        let good = fixture.byReference(contentType: ContentType.attachment, content: long.encode())
        #expect(try WorkerRun.deliver(good.payload, body: good.body, mode: .acceptYes, fixture: fixture)
                == .ok(messageId: good.messageId, duplicate: false))
        #expect(try fixture.message(id: good.messageId)?.content == long.encode())

        var broken = long.encode()
        broken.replaceSubrange(broken.startIndex..<broken.index(after: broken.startIndex), with: Array("[".utf8))
        let bad = fixture.byReference(contentType: ContentType.attachment, content: broken)
        let before = try fixture.tableContents()
        let ack = try WorkerRun.deliver(bad.payload, body: bad.body, mode: .acceptYes, fixture: fixture)
        #expect(WorkerRun.errorCode(ack) == PushErrorCode.malformedMessage.rawValue, "\(ack)")
        #expect(try fixture.tableContents() == before)
    }
}
