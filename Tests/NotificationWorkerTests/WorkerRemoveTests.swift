import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// `sotto/remove:1.0` (docs/protocol/leave-remove.md §6) through the real worker: the
/// creator's removal of another member drops its rows, of this device ends the conversation
/// here; anything else is refused with nothing written.
@Suite("Worker: member removal")
struct WorkerRemoveTests {
    private func fixture() throws -> WorkerFixture {
        try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
    }

    private static func remove(_ inboxId: String) -> [UInt8] { JSONWriter.bytes(["inboxId": .string(inboxId)]) }

    @Test("the creator removes another member: its rows go, and what it sends afterwards is refused")
    func creatorRemovesAMember() throws {
        let f = try fixture()
        let creator = try #require(f.creatorKey)
        let removal = try f.seal(contentType: ContentType.remove, content: Self.remove(f.senderKey.publicKey.inboxId),
                                 signer: creator)
        #expect(try WorkerRun.deliver(removal.payload, mode: .acceptYes, fixture: f) == .ok(messageId: removal.messageId, duplicate: false))
        #expect(try f.open().queryOne("SELECT count(*) FROM member WHERE inboxId = ?",
                                      [.text(f.senderKey.publicKey.inboxId)])?.int64(0) == 0)
        #expect(try f.conversationExpiresAt() == nil)
        let later = try f.sealText("still here?")
        #expect(WorkerRun.errorCode(try WorkerRun.deliver(later.payload, mode: .acceptYes, fixture: f)) == "unknown_sender")
        #expect(try f.message(id: later.messageId) == nil)
        // A replay is a duplicate and changes nothing.
        #expect(try WorkerRun.deliver(removal.payload, mode: .acceptYes, fixture: f) == .ok(messageId: removal.messageId, duplicate: true))
    }

    @Test("the creator removes this device: the conversation's time is up here (the daemon's sweep deletes it)")
    func creatorRemovesThisDevice() throws {
        let f = try fixture()
        let removal = try f.seal(contentType: ContentType.remove, content: Self.remove(f.recipient.inboxId), signer: f.creatorKey)
        #expect(try WorkerRun.deliver(removal.payload, mode: .acceptYes, fixture: f) == .ok(messageId: removal.messageId, duplicate: false))
        #expect(try #require(try f.conversationExpiresAt()) <= WallClock.nowMs())
    }

    @Test("refused, nothing written: a removal by a member who is not the creator, by a stranger, of the creator, or garbage",
          arguments: ["member removes the recipient", "member removes the creator", "stranger removes a member",
                      "creator removes itself", "not an object", "no inboxId", "inboxId not hex", "inboxId upper-case"])
    func refusals(_ attempt: String) throws {
        let f = try fixture()
        let creator = try #require(f.creatorKey)
        let stranger = PrivateKey.generate()
        let (content, signer, code): ([UInt8], PrivateKey, String) = switch attempt {
        case "member removes the recipient": (Self.remove(f.recipient.inboxId), f.senderKey, "unknown_sender")
        case "member removes the creator": (Self.remove(creator.publicKey.inboxId), f.senderKey, "unknown_sender")
        case "stranger removes a member": (Self.remove(f.senderKey.publicKey.inboxId), stranger, "unknown_sender")
        case "creator removes itself": (Self.remove(creator.publicKey.inboxId), creator, "malformed_message")
        case "not an object": (Array("[]".utf8), creator, "malformed_message")
        case "no inboxId": (Array("{}".utf8), creator, "malformed_message")
        case "inboxId not hex": (Self.remove("zz"), creator, "malformed_message")
        default: (Self.remove(f.senderKey.publicKey.inboxId.uppercased()), creator, "malformed_message")
        }
        let before = try f.tableContents()
        let push = try f.seal(contentType: ContentType.remove, content: content, signer: signer)
        #expect(WorkerRun.errorCode(try WorkerRun.deliver(push.payload, mode: .acceptYes, fixture: f)) == code, "\(attempt)")
        #expect(try f.tableContents() == before, "\(attempt) changed the database")
    }
}
