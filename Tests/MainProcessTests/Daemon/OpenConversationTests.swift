import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// An open conversation keeps its inbox awake ("Inbox Lifecycle Management",
    /// `openInClient`): a client subscribed to one conversation (`sotto watch --conversation`)
    /// protects its inbox while the subscription lives, counted per client, and a client
    /// killed with SIGKILL releases it (docs/adr/0033).
    @Suite("Open conversations")
    struct OpenConversationTests {
        /// `status.openInClient` as inbox id → clients.
        private static func openInClient(_ daemon: DaemonProcess) throws -> [String: Int64] {
            let map = try daemon.result("status")["openInClient"] as? [String: Any] ?? [:]
            return map.compactMapValues { int64($0) }
        }

        private static func awake(_ daemon: DaemonProcess, _ conversationId: String) throws -> Bool? {
            let list = try daemon.result("listConversations")["conversations"] as? [[String: Any]] ?? []
            return list.first { $0["id"] as? String == conversationId }?["awake"] as? Bool
        }

        private static func watch(_ conversationId: String, _ home: DaemonHome) throws -> ChildProcess {
            try ChildProcess.launch(try builtExecutable("sotto"), ["watch", "--conversation", String(conversationId.prefix(10))],
                                    environment: home.environment)
        }

        @Test("sotto watch --conversation keeps the inbox awake past eviction; two watchers count; SIGKILL of the last releases it")
        func watchProtectsAndKillReleases() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, capacity: 2)
            defer { _ = try? daemon.stop() }
            let watched = try daemon.result("newConversation", ["name": "Watched"])
            let id = try #require(watched["conversationId"] as? String)
            let inbox = try #require(watched["inboxId"] as? String)
            #expect(try Self.openInClient(daemon).isEmpty)

            let first = try Self.watch(id, home)
            defer { first.kill(SIGKILL); _ = first.finish() }
            try daemon.waitForStatus { ($0["openInClient"] as? [String: Any])?[inbox].flatMap(int64) == 1 }
            let second = try Self.watch(id, home)
            defer { second.kill(SIGKILL); _ = second.finish() }
            try daemon.waitForStatus { ($0["openInClient"] as? [String: Any])?[inbox].flatMap(int64) == 2 }

            // Two newer conversations at capacity 2: the watched one is the least recently
            // active, and eviction would take it; it stays awake, the next oldest sleeps.
            let older = try #require(try daemon.result("newConversation", ["name": "Older"])["conversationId"] as? String)
            let newer = try #require(try daemon.result("newConversation", ["name": "Newer"])["conversationId"] as? String)
            #expect(try Self.awake(daemon, id) == true)
            #expect(try Self.awake(daemon, older) == false)
            #expect(try Self.awake(daemon, newer) == true)
            #expect((try daemon.result("status")["protectedAwake"] as? [String])?.contains(inbox) == true)

            // One of two watchers killed: still protected, by the one left.
            first.kill(SIGKILL)
            _ = first.finish()
            try daemon.waitForStatus { ($0["openInClient"] as? [String: Any])?[inbox].flatMap(int64) == 1 }
            #expect(try Self.awake(daemon, id) == true)

            // The last one killed: released, and evictable again.
            second.kill(SIGKILL)
            _ = second.finish()
            try daemon.waitForStatus { ($0["openInClient"] as? [String: Any])?[inbox] == nil }
            #expect(!((try daemon.result("status")["protectedAwake"] as? [String])?.contains(inbox) ?? true))
            _ = try daemon.result("newConversation", ["name": "Newest"])
            #expect(try Self.awake(daemon, id) == false)
        }

        @Test("Subscribing to every change, or anew on the same connection, releases what the connection had open")
        func resubscribeReleases() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, capacity: 2)
            defer { _ = try? daemon.stop() }
            let a = try daemon.result("newConversation", ["name": "A"])
            let b = try daemon.result("newConversation", ["name": "B"])
            let inboxA = try #require(a["inboxId"] as? String)
            let inboxB = try #require(b["inboxId"] as? String)

            let client = try daemon.connect()
            _ = try client.result("subscribe", ["conversation": try #require(a["conversationId"] as? String)])
            #expect(try Self.openInClient(daemon) == [inboxA: 1])
            _ = try client.result("subscribe", ["conversation": try #require(b["conversationId"] as? String)])
            #expect(try Self.openInClient(daemon) == [inboxB: 1])
            _ = try client.result("subscribe", [:])
            #expect(try Self.openInClient(daemon).isEmpty)

            // An unknown conversation is refused and leaves the open one as it was.
            _ = try client.result("subscribe", ["conversation": try #require(a["conversationId"] as? String)])
            let refused = try client.call("subscribe", ["conversation": "ffffffffff"])
            #expect((refused["error"] as? [String: Any])?["code"].flatMap(int64) == -32001)
            #expect(try Self.openInClient(daemon) == [inboxA: 1])
        }
    }
}
