import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// What a real worker writes reaches the daemon: subscribers, the in-memory windows, the
    /// lifecycle (a sleeping inbox wakes).
    @Suite("Change feed")
    struct ChangeFeed {
        @Test("a worker's push reaches a subscriber as a change with its change_log seq, and readMessages shows it")
        func workerPushReachesSubscriber() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let conversationId = try #require(try daemon.result("newConversation", ["name": "Trip"])["conversationId"] as? String)
            let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath, name: "Bob")

            let subscriber = try daemon.connect()
            let startSeq = try #require(int64(try subscriber.result("subscribe")["lastSeq"]))
            let (ack, _) = try deliverThroughWorker(try remote.push("hello from a worker"), home: home)
            #expect(ack["ok"] as? Bool == true)
            let messageId = try #require(ack["messageId"] as? String)

            let expected = try changeLogSeqs(after: startSeq, home: home)
            #expect(!expected.isEmpty)
            var received: [[String: Any]] = []
            while received.count < expected.count { received.append(try subscriber.nextNotification()) }
            #expect(received.map { int64($0["seq"]) } == expected.map { $0 })
            #expect(received.allSatisfy { $0["method"] as? String == "change" })
            let inserted = try #require(received.first { $0["kind"] as? String == "messageInserted" })
            #expect(inserted["entityId"] as? String == messageId)
            #expect(inserted["conversationId"] as? String == conversationId)
            #expect(int64(inserted["writerPid"]) != Int64(daemon.pid))

            let messages = try #require(try daemon.result("readMessages", ["conversation": conversationId])["messages"] as? [[String: Any]])
            let message = try #require(messages.first { $0["id"] as? String == messageId })
            #expect(message["text"] as? String == "hello from a worker")
            #expect(message["outgoing"] as? Bool == false)
            #expect(message["senderInboxId"] as? String == remote.identity.inboxId)
        }

        @Test("resubscribing with since replays exactly the missed seqs, then goes live without a gap or duplicate")
        func sinceReplaysMissed() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let conversationId = try #require(try daemon.result("newConversation")["conversationId"] as? String)
            let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)

            var lastSeen: Int64
            do {
                let first = try daemon.connect()
                _ = try first.result("subscribe", ["since": 0])
                let upTo = try #require(try changeLogSeqs(after: 0, home: home).last)
                var seen: [Int64] = []
                while seen.last != upTo { seen.append(try #require(int64(try first.nextNotification()["seq"]))) }
                #expect(seen == Array(1...upTo))
                lastSeen = upTo
            }  // disconnected

            for index in 0..<3 {
                #expect(try deliverThroughWorker(try remote.push("missed \(index)"), home: home).ack["ok"] as? Bool == true)
            }
            _ = try daemon.result("sendMessage", ["conversation": conversationId, "text": "mine, also missed"])
            let missed = try changeLogSeqs(after: lastSeen, home: home)
            #expect(missed.count >= 4)

            let second = try daemon.connect()
            _ = try second.result("subscribe", ["since": lastSeen])
            var replayed: [Int64] = []
            while replayed.count < missed.count { replayed.append(try #require(int64(try second.nextNotification()["seq"]))) }
            #expect(replayed == missed)
            lastSeen = missed.last!

            // Live after the replay: the next worker commit is the very next seq.
            #expect(try deliverThroughWorker(try remote.push("live"), home: home).ack["ok"] as? Bool == true)
            let live = try changeLogSeqs(after: lastSeen, home: home)
            var liveReceived: [Int64] = []
            while liveReceived.count < live.count { liveReceived.append(try #require(int64(try second.nextNotification()["seq"]))) }
            #expect(liveReceived == live)
            #expect(live.first == lastSeen + 1)
        }

        @Test("a worker's push wakes a sleeping inbox with reason pushNotification and status counts it")
        func pushWakesSleepingInbox() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, capacity: 1)
            defer { _ = try? daemon.stop() }
            let a = try daemon.result("newConversation", ["name": "A"])
            let b = try daemon.result("newConversation", ["name": "B"])
            let inboxA = try #require(a["inboxId"] as? String)
            let inboxB = try #require(b["inboxId"] as? String)
            var status = try daemon.result("status")
            #expect(status["awake"] as? [String] == [inboxB])
            #expect(int64(status["sleepingCount"]) == 1)
            #expect((status["wakeReasons"] as? [String: Any])?["pushNotification"] == nil)

            let remote = try RemoteMember.join(conversationId: try #require(a["conversationId"] as? String),
                                               databasePath: home.databasePath)
            #expect(try deliverThroughWorker(try remote.push("wake up"), home: home).ack["ok"] as? Bool == true)
            status = try daemon.waitForStatus { status in
                int64((status["wakeReasons"] as? [String: Any])?["pushNotification"]) == 1
            }
            #expect(status["awake"] as? [String] == [inboxA])
            #expect(int64(status["awakeCount"]) == 1)
            #expect(int64(status["sleepingCount"]) == 1)
            let human = try runCLI(["status"], home: home).stdout
            #expect(human.contains("pushNotification=1"))
        }
    }
}
