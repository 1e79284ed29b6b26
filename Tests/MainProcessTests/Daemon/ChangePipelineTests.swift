import Foundation
import SharedStore
import SottoWire
import TestSupport
import Testing

extension DaemonProcessTests {
    /// The one change pipeline (docs/adr/0022) end to end: real daemon, real workers over the
    /// real sockets, the safety-net poll off (`SOTTO_FEED_POLL_MS=0`) so nothing here can lean
    /// on it.
    @Suite("Change pipeline")
    struct ChangePipeline {
        static let pollOff = ["SOTTO_FEED_POLL_MS": "0"]

        /// Errors of the driver threads, for the test thread to report.
        final class Failures: @unchecked Sendable {
            private let lock = NSLock()
            private var list: [String] = []
            func add(_ failure: String) { lock.withLock { list.append(failure) } }
            var all: [String] { lock.withLock { list } }
        }

        /// Runs `pushes` worker pushes on `pushThreads` threads and `sends` sendMessage calls
        /// on `sendThreads` connections, all at once, in the background.
        static func drive(daemon: DaemonProcess, remote: RemoteMember, conversationId: String,
                          pushes: Int, pushThreads: Int, sends: Int, sendThreads: Int,
                          failures: Failures) -> DispatchGroup {
            let group = DispatchGroup()
            let home = daemon.home
            for thread in 0..<pushThreads {
                DispatchQueue.global().async(group: group) {
                    for index in stride(from: thread, to: pushes, by: pushThreads) {
                        do {
                            let ack = try deliverThroughWorker(try remote.push("push \(index)"), home: home).ack
                            if ack["ok"] as? Bool != true { failures.add("push \(index) refused: \(ack)") }
                        } catch { failures.add("push \(index): \(error)") }
                    }
                }
            }
            for thread in 0..<sendThreads {
                DispatchQueue.global().async(group: group) {
                    do {
                        let sender = try daemon.connect()
                        for index in stride(from: thread, to: sends, by: sendThreads) {
                            _ = try sender.result("sendMessage", ["conversation": conversationId, "text": "send \(index)"])
                        }
                    } catch { failures.add("send: \(error)") }
                }
            }
            return group
        }

        static func messageIds(_ result: [String: Any]) -> Set<String> {
            Set((result["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        }

        @Test("a subscriber that reads on every new-message notification always finds it (200 pushes + 100 sends, poll off)")
        func readOnNotificationFindsTheMessage() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, environment: Self.pollOff)
            defer { _ = try? daemon.stop() }
            let conversationId = try #require(try daemon.result("newConversation")["conversationId"] as? String)
            let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
            let subscriber = try daemon.connect()
            _ = try subscriber.result("subscribe")

            let (pushes, sends) = (200, 100)
            let failures = Failures()
            let drivers = Self.drive(daemon: daemon, remote: remote, conversationId: conversationId,
                                     pushes: pushes, pushThreads: 4, sends: sends, sendThreads: 2, failures: failures)
            var seen = Set<String>()
            var missed: [String] = []
            while seen.count < pushes + sends, failures.all.isEmpty {
                let change = try subscriber.nextNotification()
                guard change["kind"] as? String == "messageInserted", let id = change["entityId"] as? String else { continue }
                let read = try subscriber.result("readMessages", ["conversation": conversationId, "limit": 10_000])
                if !Self.messageIds(read).contains(id) { missed.append("#\(change["seq"] ?? "?") \(id)") }
                seen.insert(id)
            }
            drivers.wait()
            #expect(failures.all.isEmpty, "\(failures.all)")
            #expect(seen.count == pushes + sends)
            #expect(missed.isEmpty, "told of \(missed.count) message(s) readMessages did not have yet: \(missed.prefix(5))")
        }

        @Test("the daemon's own writes reach a subscriber with the poll off, and are applied when the request returns")
        func ownWritesReachSubscriber() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, environment: Self.pollOff)
            defer { _ = try? daemon.stop() }
            let subscriber = try ControlSocketClient(path: home.controlSocketPath, timeoutSeconds: 10)
            _ = try subscriber.result("subscribe")
            let client = try daemon.connect()

            /// The notifications up to the first one of `kind` (for `conversation` when given).
            func awaitChange(_ kind: String, _ conversation: String? = nil) throws -> [String: Any] {
                while true {
                    let change = try subscriber.nextNotification()
                    if change["kind"] as? String == kind, conversation == nil || change["conversationId"] as? String == conversation {
                        return change
                    }
                }
            }
            /// After a request returned, the feed is at least at everything it committed.
            func expectFeedCaughtUp(_ what: String) throws {
                let newest = try #require(try changeLogSeqs(after: 0, home: home).last)
                let lastSeq = try #require(int64(try client.result("status")["lastSeq"]))
                #expect(lastSeq >= newest, "\(what): feed at #\(lastSeq), change_log at #\(newest)")
            }

            let conversationId = try #require(try client.result("newConversation", ["name": "Mine"])["conversationId"] as? String)
            _ = try awaitChange("conversationCreated", conversationId)
            for index in 0..<20 {
                let sent = try client.result("sendMessage", ["conversation": conversationId, "text": "own \(index)"])
                try expectFeedCaughtUp("sendMessage \(index)")  // before any notification could have arrived
                let change = try awaitChange("messageInserted", conversationId)
                #expect(change["entityId"] as? String == sent["messageId"] as? String)
                #expect(change["text"] as? String == "own \(index)")
                #expect(change["outgoing"] as? Bool == true)
            }
            let first = try #require(try client.result("readMessages", ["conversation": conversationId, "limit": 1])["messages"]
                                        as? [[String: Any]]).first
            let reaction = try client.result("react", ["conversation": conversationId,
                                                       "message": try #require(first?["id"] as? String), "emoji": "👍"])
            #expect(try awaitChange("messageInserted", conversationId)["entityId"] as? String == reaction["messageId"] as? String)
            _ = try client.result("markRead", ["conversation": conversationId])
            _ = try awaitChange("localStateChanged", conversationId)
            // In an hour: an explosion due now deletes the conversation's change_log rows too.
            _ = try client.result("explode", ["conversation": conversationId, "atMs": WallClock.nowMs() + 3_600_000])
            _ = try awaitChange("conversationExpiresChanged", conversationId)
            try expectFeedCaughtUp("explode")
        }

        @Test("seqs reach a subscriber strictly increasing, without gap or duplicate, under concurrent pushes and sends (poll off)")
        func seqsInOrderUnderConcurrency() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, environment: Self.pollOff)
            defer { _ = try? daemon.stop() }
            let conversationId = try #require(try daemon.result("newConversation")["conversationId"] as? String)
            let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
            let subscriber = try daemon.connect()
            let start = try #require(int64(try subscriber.result("subscribe")["lastSeq"]))

            let failures = Failures()
            Self.drive(daemon: daemon, remote: remote, conversationId: conversationId,
                       pushes: 120, pushThreads: 3, sends: 120, sendThreads: 3, failures: failures).wait()
            #expect(failures.all.isEmpty, "\(failures.all)")
            // Everything committed so far (the outbox may go on writing; its later changes come after).
            let committed = try changeLogSeqs(after: start, home: home)
            var delivered: [Int64] = []
            while delivered.last.map({ $0 < committed.last! }) ?? true {
                delivered.append(try #require(int64(try subscriber.nextNotification()["seq"])))
            }
            #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0 < $1 }, "not strictly increasing")
            #expect(delivered == committed, "delivered \(delivered.count) seqs, change_log has \(committed.count)")
        }

        @Test("a read right after a worker's ack sees the message, 60 times in a row (poll off)")
        func readAfterAck() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, environment: Self.pollOff)
            defer { _ = try? daemon.stop() }
            let conversationId = try #require(try daemon.result("newConversation")["conversationId"] as? String)
            let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
            let reader = try daemon.connect()
            var missed: [Int] = []
            for index in 0..<60 {
                let ack = try deliverThroughWorker(try remote.push("acked \(index)"), home: home).ack
                let messageId = try #require(ack["messageId"] as? String, "\(ack)")
                let read = try reader.result("readMessages", ["conversation": conversationId, "limit": 10_000])
                if !Self.messageIds(read).contains(messageId) { missed.append(index) }
            }
            #expect(missed.isEmpty, "readMessages right after the ack missed pushes \(missed)")
        }

        @Test("a one-conversation subscription gets that conversation's changes only, live and replayed")
        func oneConversationSubscription() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, environment: Self.pollOff)
            defer { _ = try? daemon.stop() }
            let a = try #require(try daemon.result("newConversation", ["name": "A"])["conversationId"] as? String)
            let b = try #require(try daemon.result("newConversation", ["name": "B"])["conversationId"] as? String)
            let remoteA = try RemoteMember.join(conversationId: a, databasePath: home.databasePath)
            let remoteB = try RemoteMember.join(conversationId: b, databasePath: home.databasePath)
            let subscriber = try daemon.connect()
            let subscribed = try subscriber.result("subscribe", ["conversation": String(a.prefix(10))])  // a reference
            #expect(subscribed["conversationId"] as? String == a)

            // B first: had they reached A's subscriber, they would come before A's.
            for index in 0..<3 {
                #expect(try deliverThroughWorker(try remoteB.push("to B \(index)"), home: home).ack["ok"] as? Bool == true)
                _ = try daemon.result("sendMessage", ["conversation": b, "text": "mine to B \(index)"])
            }
            let pushed = try #require(try deliverThroughWorker(try remoteA.push("to A"), home: home).ack["messageId"] as? String)
            let sent = try #require(try daemon.result("sendMessage", ["conversation": a, "text": "mine to A"])["messageId"] as? String)
            var live: [[String: Any]] = []
            while !live.contains(where: { $0["entityId"] as? String == sent }) { live.append(try subscriber.nextNotification()) }
            #expect(live.allSatisfy { $0["conversationId"] as? String == a }, "\(live.map { $0["conversationId"] ?? "-" })")
            #expect(live.contains { $0["entityId"] as? String == pushed })

            // Replay from 0, filtered the same way: A's whole history, nothing of B.
            let replaying = try daemon.connect()
            let lastSeq = try #require(int64(try replaying.result("subscribe", ["since": 0, "conversation": a])["lastSeq"]))
            let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
            let expected = try conn.query("SELECT seq FROM change_log WHERE conversationId = ? AND seq <= ? ORDER BY seq",
                                          [.text(a), .integer(lastSeq)]).map { try $0.int64(0) }
            var replayed: [Int64] = []
            while replayed.count < expected.count { replayed.append(try #require(int64(try replaying.nextNotification()["seq"]))) }
            #expect(replayed == expected)

            // Bad input: a clear error, and the connection's subscription is unchanged.
            let unknown = try subscriber.call("subscribe", ["conversation": "ffffffffffff"])
            #expect((unknown["error"] as? [String: Any])?["code"] as? Int == -32001, "\(unknown)")
            let wrongType = try subscriber.call("subscribe", ["conversation": 5])
            #expect((wrongType["error"] as? [String: Any])?["code"] as? Int == -32602, "\(wrongType)")
        }

        @Test("a SOTTO_FEED_POLL_MS that is not a number of milliseconds stops the start with a clear message")
        func invalidPollInterval() throws {
            for value in ["-5", "often", "99999999999"] {
                let home = try DaemonHome()
                let daemon = try DaemonProcess.launch(home: home, environment: ["SOTTO_FEED_POLL_MS": value])
                let deadline = Date().addingTimeInterval(30)
                while daemon.process.isRunning, Date() < deadline { usleep(10_000) }  // polls the exit, with a deadline
                if daemon.process.isRunning {
                    Issue.record("the daemon started with SOTTO_FEED_POLL_MS=\(value)")
                    daemon.kill()
                    continue
                }
                #expect(daemon.waitForExit() == 78)
                #expect(daemon.log.contains("SOTTO_FEED_POLL_MS=\(value) is not a number of milliseconds"), "\(daemon.log)")
            }
        }
    }
}
