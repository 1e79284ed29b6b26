import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// docs/adr/0056 from the daemon's side: `awake-mailboxes/` names exactly the clientIds of
    /// the awake inboxes, through evictions, an explode, and a restart that finds a previous
    /// run's marks and garbage.
    @Suite("Awake marks for sotto-relayd")
    struct AwakeMarksTests {
        @Test("at capacity 2 with 3 conversations the marks are the 2 awake inboxes' clientIds; an explode removes its mark; a restart removes stale marks and garbage")
        func marksFollowTheLifecycle() throws {
            let home = try DaemonHome()
            let marksPath = home.groupPath + "/awake-mailboxes"
            let marks = { Set((try? FileManager.default.contentsOfDirectory(atPath: marksPath)) ?? []) }
            var daemon = try DaemonProcess.start(home: home, capacity: 2)
            defer { _ = try? daemon.stop() }
            var conversations: [String] = []
            for name in ["Oldest", "Middle", "Newest"] {
                conversations.append(try #require(try daemon.result("newConversation", ["name": name])["conversationId"] as? String))
            }
            let awakeClientIds = {
                let awake = try #require(try daemon.result("status")["awake"] as? [String])
                let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
                return Set(try awake.map { try #require(try conn.queryOne("SELECT clientId FROM inbox WHERE inboxId = ?", [.text($0)])?.string(0)) })
            }
            let first = try awakeClientIds()
            #expect(first.count == 2)
            #expect(marks() == first, "the marks name the awake inboxes, the evicted one's is gone")

            _ = try daemon.result("explode", ["conversation": conversations[2]])
            let afterExplode = try awakeClientIds()
            #expect(marks() == afterExplode)
            #expect(marks().count <= 2)

            _ = try daemon.stop()
            let stale = UUID().uuidString.lowercased()
            FileManager.default.createFile(atPath: marksPath + "/" + stale, contents: nil)
            FileManager.default.createFile(atPath: marksPath + "/garbage", contents: Data("x".utf8))
            daemon = try DaemonProcess.start(home: home, capacity: 2)
            let restarted = try awakeClientIds()
            #expect(!marks().contains(stale), "a previous run's mark is removed")
            #expect(!marks().contains("garbage"))
            #expect(marks() == restarted)
        }
    }
}
