import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing
@testable import DaemonEngine

/// `AttachmentStore` on a real directory (docs/adr/0074): a stored file is the file
/// encrypted, under its message's id and no other name; the start-up sweep removes what has
/// no message and keeps what has; deleting a conversation leaves no file and no directory.
@Suite("Attachment store")
struct AttachmentStoreTests {
    static let conversation = String(repeating: "c", count: 32)

    static func fixture() throws -> (TemporaryDirectory, AttachmentStore, String) {
        let tmp = try TemporaryDirectory(prefix: "attstore")
        let group = GroupDirectory(path: tmp.path + "/group")
        try group.create()
        let source = tmp.path + "/file.bin"
        try Data((0..<100_000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: source))
        return (tmp, AttachmentStore(group: group), source)
    }

    static func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test("stored under the message id only, 0600, and it opens to the file")
    func stores() async throws {
        let (tmp, store, source) = try Self.fixture()
        let message = String(repeating: "a", count: 32)
        let stored = try await store.store(path: source, conversationId: Self.conversation, messageId: message)
        let directory = store.group.attachmentsPath(conversationId: Self.conversation)
        #expect(Self.names(directory) == [message])
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + message)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + message)))
        var decryptor = AttachmentDecryptor(stored.reference(name: "file.bin", mediaType: AttachmentMediaType.unknown))
        var plain: [UInt8] = []
        try decryptor.consume(bytes) { plain += $0 }
        try decryptor.finish()
        #expect(plain == (0..<100_000).map { UInt8($0 % 251) })
        _ = tmp
    }

    @Test("a refusal leaves nothing: not a file, missing (with why for /tmp), too large")
    func refusalsLeaveNothing() async throws {
        let (tmp, store, _) = try Self.fixture()
        let huge = tmp.path + "/huge"
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, off_t(AttachmentLayout.maxSize + 1)) == 0)
        for path in [tmp.path, tmp.path + "/missing", huge] {
            await #expect(throws: AttachmentStore.Failure.self) {
                try await store.store(path: path, conversationId: Self.conversation, messageId: String(repeating: "b", count: 32))
            }
        }
        #expect(Self.names(store.group.attachmentsPath(conversationId: Self.conversation)).isEmpty)
        #expect(AttachmentStore.openFailure(ENOENT, path: "/tmp/x.jpg").contains("a /tmp of its own"))
        #expect(!AttachmentStore.openFailure(ENOENT, path: "/home/ann/x.jpg").contains("/tmp"))
    }

    @Test("the sweep removes stored and partial files with no message, keeps the rest (a partial file of a message is a fetch to resume); deleting a conversation removes its directory")
    func sweepAndDelete() async throws {
        let (tmp, store, source) = try Self.fixture()
        let kept = String(repeating: "1", count: 32), orphan = String(repeating: "2", count: 32)
        let elsewhere = String(repeating: "3", count: 32)
        for message in [kept, orphan, elsewhere] {
            _ = try await store.store(path: source, conversationId: Self.conversation, messageId: message)
        }
        let directory = store.group.attachmentsPath(conversationId: Self.conversation)
        #expect(FileManager.default.createFile(atPath: directory + "/.\(kept).partial", contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: directory + "/.\(orphan).partial", contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: directory + "/.partial", contents: Data([1])))
        // `elsewhere` is a message of another conversation: not this file's.
        let removed = store.sweep { ids in
            ids.reduce(into: [String: String]()) { found, id in
                if id == kept { found[id] = Self.conversation } else if id == elsewhere { found[id] = "other" }
            }
        }
        #expect(removed == 4)
        #expect(Self.names(directory) == [".\(kept).partial", kept])

        #expect(store.deleteConversations([Self.conversation]) == 2)
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(Self.names(store.group.attachmentsPath).isEmpty)
        _ = tmp
    }
}
