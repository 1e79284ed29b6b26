import Foundation
import SharedStore
import SottoCrypto
import TestSupport
import Testing

extension DamageTests {
    /// The keystore and the group directory: a lost or wrong master key, one unreadable
    /// identity, a directory open to others.
    @Suite("Keystore and directory")
    struct KeystoreAndDirectory {
        static func clientId(ofConversation id: String, home: DaemonHome) throws -> String {
            let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
            return try #require(try conn.queryOne("SELECT clientId FROM conversation WHERE id = ?", [.text(id)])?.string(0))
        }

        @Test("a missing master.key next to sealed identities: no new key, a message naming the file and the remedy")
        func missingMasterKey() throws {
            let seeded = try DamageHarness.seeded()
            let home = seeded.home
            let keyPath = home.keystorePath + "/master.key"
            try FileManager.default.removeItem(atPath: keyPath)

            let log = try DamageHarness.refusedStart(home: home)
            #expect(log.contains("\(keyPath) is missing while"), "\(log)")
            #expect(log.contains("sotto key import") && log.contains("restore master.key from your backup"), "\(log)")
            #expect(!FileManager.default.fileExists(atPath: keyPath), "the daemon created a new master key over sealed identities")
            DamageHarness.expectRefusedRetryable(try DamageHarness.push(try seeded.remote.push("x"), home: home))
        }

        @Test("a wrong master key: the daemon says so and refuses, instead of failing every identity in silence")
        func wrongMasterKey() throws {
            let seeded = try DamageHarness.seeded()
            let home = seeded.home
            let keyPath = home.keystorePath + "/master.key"
            let original = try Data(contentsOf: URL(fileURLWithPath: keyPath))
            try Data(SecureRandom.bytes(32)).write(to: URL(fileURLWithPath: keyPath))
            chmod(keyPath, 0o600)

            let log = try DamageHarness.refusedStart(home: home)
            #expect(log.contains("opens none of the"), "\(log)")
            #expect(log.contains("Restore the original master key"), "\(log)")
            DamageHarness.expectRefusedRetryable(try DamageHarness.push(try seeded.remote.push("x"), home: home))

            // The remedy: the original key back; the daemon starts and every acked message is there.
            try original.write(to: URL(fileURLWithPath: keyPath))
            chmod(keyPath, 0o600)
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let messages = try daemon.result("readMessages", ["conversation": seeded.conversationId])["messages"] as? [[String: Any]] ?? []
            #expect(Set(messages.compactMap { $0["id"] as? String }).isSuperset(of: seeded.acked))
        }

        @Test("one unreadable identity is isolated and reported by clientId; every other conversation is served")
        func garbageIdentity() throws {
            let seeded = try DamageHarness.seeded()
            let home = seeded.home
            var daemon = try DaemonProcess.start(home: home)
            let other = try #require(try daemon.result("newConversation", ["name": "Other"])["conversationId"] as? String)
            #expect(try daemon.stop() == 0)
            let otherRemote = try RemoteMember.join(conversationId: other, databasePath: home.databasePath)
            let damagedClientId = try Self.clientId(ofConversation: seeded.conversationId, home: home)
            let identityPath = home.keystorePath + "/\(damagedClientId).identity"
            try Data(SecureRandom.bytes(176)).write(to: URL(fileURLWithPath: identityPath))
            chmod(identityPath, 0o600)

            daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let status = try daemon.result("status")
            let damaged = status["damagedIdentities"] as? [[String: Any]] ?? []
            #expect(damaged.compactMap { $0["clientId"] as? String } == [damagedClientId], "\(status)")
            #expect(daemon.log.contains("identity clientId \(damagedClientId) cannot be opened"), "\(daemon.log)")
            #expect(try runCLI(["status"], home: home).stdout.contains("identity \(damagedClientId) cannot be opened"))

            // The rest is served: a push to the other conversation is stored and read.
            let stored = try DamageHarness.push(try otherRemote.push("still here"), home: home)
            #expect(stored.ack["ok"] as? Bool == true, "\(stored)")
            let messages = try daemon.result("readMessages", ["conversation": other])["messages"] as? [[String: Any]] ?? []
            #expect(messages.contains { $0["text"] as? String == "still here" })
            // Opening the damaged one says which identity and what to do.
            let read = try runCLI(["read", seeded.conversationId], home: home)
            #expect(read.status != 0 && read.stderr.contains("clientId \(damagedClientId)) cannot be opened"), "\(read)")
            // The damaged one's pushes are refused for a retry (its file may be restored), not acked.
            DamageHarness.expectRefusedRetryable(try DamageHarness.push(try seeded.remote.push("x"), home: home))
        }

        @Test("a group directory open to others: daemon and worker both refuse, with the chmod that fixes it")
        func openGroupDirectory() throws {
            let seeded = try DamageHarness.seeded()
            let home = seeded.home
            let before = try DamageHarness.messageIds(home: home)
            chmod(home.groupPath, 0o755)

            let log = try DamageHarness.refusedStart(home: home)
            #expect(log.contains("chmod 700 \(home.groupPath)"), "\(log)")
            let refused = try DamageHarness.push(try seeded.remote.push("into an open directory"), home: home)
            DamageHarness.expectRefusedRetryable(refused)
            #expect(refused.log.contains("chmod 700 \(home.groupPath)"), "\(refused.log)")
            #expect(try DamageHarness.messageIds(home: home) == before)

            chmod(home.groupPath, 0o700)
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            #expect(try DamageHarness.push(try seeded.remote.push("after chmod"), home: home).ack["ok"] as? Bool == true)
        }
    }
}
