import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

extension DaemonProcessTests {
    /// WAL upkeep (docs/adr/0003): the daemon alone checkpoints; a storm of foreign commits
    /// with a reader in the way grows the WAL past the budget, and it comes back under it
    /// once the reader is gone.
    @Suite("WAL upkeep")
    struct WALUpkeep {
        static let budget: Int64 = 256 * 1024

        static func walBytes(_ home: DaemonHome) -> Int64 {
            var info = stat()
            return stat(home.databasePath + "-wal", &info) == 0 ? Int64(info.st_size) : 0
        }

        static func checkpoints(_ status: [String: Any], _ kind: String) -> Int64 {
            int64((status["checkpoints"] as? [String: Any])?[kind]) ?? 0
        }

        @Test("past SOTTO_WAL_TRUNCATE_BYTES with a reader active: TRUNCATE backs off, then resets the WAL once the reader ends")
        func truncateWithBackoff() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, environment: ["SOTTO_WAL_TRUNCATE_BYTES": String(Self.budget)])
            defer { _ = try? daemon.stop() }
            let conversationId = try #require(try daemon.result("newConversation")["conversationId"] as? String)
            let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
            let inboxId = try #require(try daemon.result("status")["awake"] as? [String]).first!
            let topic = DBConversation.topic(for: conversationId)

            // A foreign reader holds a snapshot from before the storm: no checkpoint can pass it.
            let reader = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
            try reader.execute("BEGIN")
            _ = try reader.queryOne("SELECT count(*) FROM message")

            // The storm: worker-style commits (one IMMEDIATE transaction each) from another connection.
            let writer = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
            let text = String(repeating: "storm ", count: 150)
            var written = 0
            while Self.walBytes(home) <= 2 * Self.budget {
                let message = IncomingMessage(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversationId,
                                              senderInboxId: remote.identity.inboxId,
                                              senderPublicKey: remote.identity.publicKey.hex, sentAtMs: WallClock.nowMs(),
                                              contentType: "xmtp.org/text:1.0", content: Array(text.utf8),
                                              fallback: nil, kind: .stored(referenceId: nil))
                _ = try writer.immediateTransaction { () throws(IncomingWriteError) in
                    try IncomingMessageWriter.write(message, recipientInboxId: inboxId, topic: topic,
                                                    now: WallClock.nowMs(), on: writer)
                }
                written += 1
                try #require(written < 10_000)
            }
            #expect(written >= 5)  // ≈ 44 KB of WAL per commit (message, indexes, change_log, state)

            // The daemon sees the WAL over budget and tries; the reader makes it back off.
            var status = try daemon.waitForStatus { Self.checkpoints($0, "busy") >= 1 }
            #expect(Self.checkpoints(status, "truncate") == 0)
            #expect(Self.walBytes(home) > Self.budget)

            // The writer was never held up by the checkpoint attempts.
            #expect(try writer.run("UPDATE conversation_local_state SET muted = muted WHERE conversationId = ?",
                                   [.text(conversationId)]) >= 0)

            let peakWAL = Self.walBytes(home)
            let busyTries = Self.checkpoints(status, "busy")
            try reader.execute("COMMIT")
            let readerEnded = Date()
            status = try daemon.waitForStatus(timeout: 60) { Self.checkpoints($0, "truncate") >= 1 }
            print("WAL upkeep figures: \(written) commits → WAL \(peakWAL) bytes (budget \(Self.budget)); "
                  + "\(busyTries) busy TRUNCATE tries while the reader held its snapshot; "
                  + "TRUNCATE done \(Int(Date().timeIntervalSince(readerEnded) * 1000)) ms after the reader ended")
            #expect(Self.walBytes(home) <= Self.budget)
            #expect(int64(status["walBytes"]) ?? .max <= Self.budget)

            // Nothing was lost: every message is in the database file and readable.
            let count = try #require(try writer.queryOne("SELECT count(*) FROM message WHERE conversationId = ?",
                                                         [.text(conversationId)])?.int64(0))
            #expect(count == Int64(written))
        }

        @Test("an idle daemon runs a PASSIVE checkpoint after commits stop")
        func passiveWhenIdle() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let before = Self.checkpoints(try daemon.result("status"), "passive")
            _ = try daemon.result("newConversation")
            let status = try daemon.waitForStatus { Self.checkpoints($0, "passive") > before }
            #expect(Self.checkpoints(status, "truncate") == 0)
        }

        @Test("a bad SOTTO_WAL_TRUNCATE_BYTES stops start-up with a clear message")
        func badBudget() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.launch(home: home, environment: ["SOTTO_WAL_TRUNCATE_BYTES": "lots"])
            #expect(daemon.waitForExit() == 70)
            #expect(daemon.log.contains("SOTTO_WAL_TRUNCATE_BYTES must be"))
        }
    }
}
