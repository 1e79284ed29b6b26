@testable import DaemonCore
@testable import DaemonEngine
import Foundation
@testable import SottoDaemon
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Content sealed per conversation (docs/adr/0052) between real daemons and workers: what a
/// person wrote or is called is nowhere in the group directory's files in clear, everything
/// that shows it still does, and after an explode the sealed rows copied aside open with
/// nothing left on the machine.
@Suite("Messaging: content sealed at rest", .serialized)
struct SealedContentTests {
    static func unique(_ label: String) -> String { "\(label)-\(Hex.encode(SecureRandom.bytes(6)))" }

    /// Every file under the group directory holding `needle` (database, -wal, -shm, keystore).
    static func hits(_ device: Device, _ needle: String) -> [String] {
        FileSearch.files(containing: Array(needle.utf8), under: device.group.path)
    }

    @Test("texts, a reply, a reaction, names and a rename are in no file in clear, before and after a checkpoint; all still show")
    func nothingInClear() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let name = Self.unique("Lake-trip"), bobName = Self.unique("Bea-profile"), renamed = Self.unique("Bea-renamed")
        let text = Self.unique("north-gate-at-nine"), reply = Self.unique("bring-the-map"), emoji = "🦩"
        let trip = try net.conversation(creator: alice, joiners: [bob], name: name) { _ in bobName }
        _ = try alice.json(["send", trip, text])
        try bob.waitUntil("bob has alice's text") { hasText(bob, trip, text) }
        let textId = try require(message(bob, trip, text: text)?["id"] as? String)
        _ = try bob.json(["send", trip, reply, "--reply-to", String(textId.prefix(10))])
        _ = try bob.json(["react", trip, textId, emoji])
        _ = try bob.json(["rename", trip, renamed])
        try alice.waitUntil("alice has the reply and the reaction") {
            message(alice, trip, text: reply)?["referenceId"] as? String == textId
                && message(alice, trip, text: "reacted \(emoji)")?["referenceId"] as? String == textId
        }
        try alice.waitUntil("alice shows bob's new name") { try alice.cli(["read", trip]).stdout.contains("\(renamed): \(reply)") }
        try bob.waitUntil("bob's reply delivered") { deliveryStatus(bob, trip, reply) == "delivered" }
        #expect(try bob.conversation(trip)?["name"] as? String == name)

        // The scan can find what is stored in clear: the conversation id is (docs/adr/0052).
        #expect(!Self.hits(alice, trip).isEmpty)
        let needles = [name, bobName, renamed, text, reply, emoji]
        // While the daemons run: their WALs hold the newest pages, not yet checkpointed.
        for device in [alice, bob] {
            for needle in needles { #expect(Self.hits(device, needle) == [], "\(device.name) holds \(needle)") }
        }
        for device in [alice, bob] {
            let masterKey = try #require(FileManager.default.contents(atPath: device.group.keystorePath + "/master.key"))
            let keyBytes = masterKey.count == 32 ? Array(masterKey)
                : try #require(Hex.decode(String(decoding: masterKey.prefix(64), as: UTF8.self), count: 32))
            // Only in the key file these devices asked for (SOTTO_KEY_STORE=file); with the
            // keyring there is none (docs/adr/0045's tests). Never in the database or its WAL.
            #expect(FileSearch.files(containing: keyBytes, under: device.group.path) == ["keystore/master.key"],
                    "\(device.name) holds its master key")
            device.stopDaemon()   // checkpoints on the way out
            for needle in needles { #expect(Self.hits(device, needle) == [], "\(device.name) holds \(needle) after stopping") }
            try device.startDaemon()
        }
        // Everything that shows them still does, from the restarted daemons.
        #expect(try alice.cli(["read", trip]).stdout.contains("\(renamed): \(reply)"))
        #expect(try bob.conversation(trip)?["name"] as? String == name)
        #expect(hasText(bob, trip, "reacted \(emoji)"))
    }

    @Test("after an explode, the sealed rows copied aside open with no key left on either machine")
    func explodeShredsTheKey() throws {
        let net = try Network(["alice", "bob"])
        let (alice, bob) = (net["alice"], net["bob"])
        let trip = try net.conversation(creator: alice, joiners: [bob], name: Self.unique("Shred"))
        let text = Self.unique("before-the-explode")
        _ = try alice.json(["send", trip, text])
        try bob.waitUntil("bob has the text") { hasText(bob, trip, text) }

        // Copied aside: each device's sealed cells of the conversation, with their addresses.
        var copies: [(device: Device, address: CellAddress, cell: [UInt8])] = []
        for device in [alice, bob] {
            for column in SealedColumn.allCases {
                for row in try device.query("""
                    SELECT \(column.rowIdColumn), \(column.column) FROM \(column.table)
                    WHERE \(column.conversationIdColumn) = ? AND \(column.column) IS NOT NULL
                    """, [.text(trip)]) {
                    guard case .blob(let cell) = row.values[1] else { Issue.record("\(column) not sealed"); continue }
                    copies.append((device, column.address(rowId: try row.string(0)), cell))
                }
            }
        }
        #expect(copies.filter { $0.address.table == "message" }.count >= 4)
        let inboxId = try require(try bob.conversation(trip)?["inboxId"] as? String)
        let before = try Keystore(directory: bob.group.keystorePath, environment: [:]).identity(inboxId: inboxId)
        let bobCopy = try #require(copies.first { $0.device === bob && $0.address.column == "content" })
        // The copy opens while the identity exists: the check below can fail.
        #expect(throws: Never.self) {
            try ConversationContentKey(databaseKey: before.databaseKey, conversationId: trip).open(bobCopy.cell, at: bobCopy.address)
        }

        _ = try alice.json(["explode", trip])
        try bob.waitUntil("bob deleted it") { try isGone(bob, trip) }
        for device in [alice, bob] {
            let keystore = try Keystore(directory: device.group.keystorePath, environment: [:])
            let left = try keystore.list() + [try keystore.peekUnused()].compactMap { $0 }
            for identity in left {
                let key = ConversationContentKey(databaseKey: identity.databaseKey, conversationId: trip)
                for copy in copies {
                    #expect(throws: SealedCellError.authenticationFailed) { try key.open(copy.cell, at: copy.address) }
                }
            }
        }
    }
}

@Suite("Timeline: an unreadable row")
struct UnreadableRowTests {
    @Test("a row whose sealed content did not open shows a notice, never its bytes or fallback")
    func unreadableShowsNotice() {
        var row = DBMessage(id: "m1", conversationId: "c1", senderInboxId: "s", sentAt: 1, receivedAt: 1,
                            contentType: "xmtp.org/text:1.0", content: [], fallback: nil, referenceId: nil,
                            isOutgoing: false, deliveryStatus: nil)
        row.isUnreadable = true
        let shown = TimelineMessage(row)
        #expect(shown.text.hasPrefix("[cannot be opened"))
    }
}
