import Foundation
import DaemonStore
import SharedStore
import SottoCrypto
import TestSupport
import Testing

extension DaemonProcessTests {
    /// ADR 0016: what a daemon killed between an explosion's commit and its keystore wipe
    /// leaves (rows gone, tombstone, key files; `.deleted-`/`.taken-` leftovers) is finished
    /// by the next daemon before it reports READY=1.
    @Suite("Start-up finishes interrupted deletions")
    struct StartupTombstones {
        @Test("a tombstoned identity and keystore leftovers are wiped before READY=1")
        func finishedBeforeReady() throws {
            let home = try DaemonHome()
            var daemon = try DaemonProcess.start(home: home)
            let created = try daemon.result("newConversation", ["name": "Doomed"])
            let kept = try daemon.result("newConversation", ["name": "Kept"])
            #expect(try daemon.stop() == 0)
            let inboxId = try #require(created["inboxId"] as? String)
            let keptInbox = try #require(kept["inboxId"] as? String)

            // The deletion committed; the wipe never ran.
            let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
            let clientId = try #require(try conn.queryOne("SELECT clientId FROM inbox WHERE inboxId = ?", [.text(inboxId)])?.string(0))
            try conn.immediateTransaction { () throws(StoreError) in _ = try InboxDeletion.delete(inboxId: inboxId, on: conn) }
            let keystore = home.keystorePath
            // The names are fixed: the new daemon may be writing its unused slot (a `.tmp-` of
            // its own) while the test lists the directory, so only these must be gone.
            let leftovers = [".deleted-00112233aabbccdd", ".taken-8899aabbccddeeff", ".tmp-0123456789abcdef"]
            for name in leftovers {
                #expect(FileManager.default.createFile(atPath: "\(keystore)/\(name)", contents: Data([1, 2, 3]),
                                                       attributes: [.posixPermissions: 0o600]))
            }
            #expect(FileManager.default.fileExists(atPath: "\(keystore)/\(clientId).identity"))

            daemon = try DaemonProcess.start(home: home)   // returns at READY=1
            defer { _ = try? daemon.stop() }
            let names = try FileManager.default.contentsOfDirectory(atPath: keystore)
            #expect(!names.contains("\(clientId).identity"), "\(names)")
            #expect(!names.contains("\(inboxId).inbox"), "\(names)")
            #expect(Set(names).isDisjoint(with: leftovers), "\(names)")
            #expect(try conn.queryOne("SELECT count(*) FROM inbox_tombstone")?.int64(0) == 0)
            // The other conversation's identity is untouched.
            #expect(try Keystore(directory: keystore, environment: [:]).identity(inboxId: keptInbox).inboxId == keptInbox)
        }
    }
}
