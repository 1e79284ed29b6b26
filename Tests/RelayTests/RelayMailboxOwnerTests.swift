import Foundation
@testable import RelayTransport
import Synchronization
import SottoWire
import TestSupport
import Testing

/// Only the owner touches a mailbox (issue #19 goal 2, docs/adr/0051): on a real nats-server
/// in operator mode, set up by `scripts/relay-operator.py`, a hostile member with a valid user
/// of its own (minted with the relay's signing key, as every device mints its users) who
/// knows the victim's clientId and even its consumer's name tries everything JetStream offers
/// against the victim's mailbox. The relay refuses each attempt, and the victim's real relayd
/// and worker store every message sent to it, exactly once.
@Suite("Relay mailbox owner", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayMailboxOwnerTests {
    @Test("a hostile member can publish into a victim's mailbox and do nothing else to it; the victim gets every message once")
    func hostileMemberIsRefused() async throws {
        try await onOwnThread {
            guard let rig = try RelayRig.make(operatorMode: true), let setup = rig.operatorSetup else { return }
            defer { rig.tearDown() }
            try rig.startPushSocket()
            try rig.startRelayd(arguments: ["--ack-wait-ms", "60000", "--retry-min-ms", "200"])
            let victim = try rig.ownedMailbox()
            #expect(victim.durable.hasPrefix("U") && victim.durable.count == 56)

            let hostileKey = Nkey.generate(.user)
            let hostile = try RelayConnection.connect(try setup.deviceConfiguration(rig.server), user: hostileKey)
            defer { hostile.close() }
            var sent: [String] = []
            func send(_ text: String) throws {
                // Anyone may publish into any mailbox: the hostile member is a sender too.
                let push = try rig.fixture.sealTextForRelay(text)
                _ = try hostile.publish(push.payload, to: rig.mailbox, messageId: push.messageId)
                sent.append(push.messageId)
            }
            for index in 0..<3 { try send("before \(index)") }

            let stream = Mailbox.streamName
            let own = hostileKey.publicKey
            func refused(_ subject: String, _ payload: String = "", _ what: String) {
                let answer = hostile.rawRequest(subject, payload)
                #expect(answer.reply == nil, "\(what): the relay answered \(answer.reply ?? "")")
                #expect(answer.lastError.contains("Permissions Violation for Publish to \"\(subject)\""),
                        "\(what): last error \(answer.lastError)")
            }
            refused("$JS.API.CONSUMER.MSG.NEXT.\(stream).\(victim.durable)", #"{"batch":10,"no_wait":true}"#, "fetch")
            refused("$JS.API.CONSUMER.INFO.\(stream).\(victim.durable)", "", "consumer info")
            refused("$JS.API.CONSUMER.DELETE.\(stream).\(victim.durable)", "", "consumer delete")
            refused("$JS.API.CONSUMER.DURABLE.CREATE.\(stream).\(victim.durable)",
                    Self.consumerConfig(durable: victim.durable, filter: rig.mailbox.subject), "take over the victim's consumer name")
            refused("$JS.API.CONSUMER.CREATE.\(stream)", Self.consumerConfig(durable: nil, filter: rig.mailbox.subject), "ephemeral consumer")
            refused("$JS.API.STREAM.PURGE.\(stream)", #"{"filter":"\#(rig.mailbox.subject)"}"#, "purge the subject")
            refused("$JS.API.STREAM.MSG.GET.\(stream)", #"{"last_by_subj":"\#(rig.mailbox.subject)"}"#, "msg get")
            refused("$JS.API.DIRECT.GET.\(stream)", #"{"last_by_subj":"\#(rig.mailbox.subject)"}"#, "direct get")
            refused("$JS.API.STREAM.MSG.DELETE.\(stream)", #"{"seq":1}"#, "msg delete")
            refused("$JS.API.STREAM.INFO.\(stream)", #"{"subjects_filter":"\#(rig.mailbox.subject)"}"#, "count the victim's messages")
            refused("$JS.API.STREAM.DELETE.\(stream)", "", "stream delete")
            refused("$JS.API.STREAM.UPDATE.\(stream)", #"{"name":"\#(stream)","subjects":["x.>"]}"#, "stream update")
            refused("$JS.API.STREAM.CREATE.\(own)", #"{"name":"\#(own)","sources":[{"name":"\#(stream)","filter_subject":"\#(rig.mailbox.subject)"}]}"#,
                    "a stream sourcing the victim's subject (its consumer would take the victim's messages)")
            hostile.rawPublish("$JS.ACK.\(stream).\(victim.durable).1.1.1.0.0", "+TERM")
            #expect(hostile.lastError.contains("Permissions Violation for Publish to \"$JS.ACK.\(stream).\(victim.durable)"), "\(hostile.lastError)")

            // Its own consumer (the name its permissions allow) on the victim's subject, or on
            // all of them: the work-queue stream refuses a second consumer of a subject.
            for filter in [rig.mailbox.subject, Mailbox.subjectPrefix + "*", Mailbox.allSubjects] {
                let answer = hostile.rawRequest("$JS.API.CONSUMER.DURABLE.CREATE.\(stream).\(own)",
                                                Self.consumerConfig(durable: own, filter: filter))
                #expect(answer.reply?.contains(#""err_code":10100"#) == true, "own consumer on \(filter): \(answer.reply ?? answer.lastError)")
            }
            // The library's own calls, as a modified client would make them.
            #expect(throws: RelayError.self) { try hostile.purge(victim) }
            #expect(throws: RelayError.self) { try hostile.deleteConsumer(victim) }
            #expect(throws: RelayError.self) { _ = try MailboxConsumer(relay: hostile, mailbox: victim, ackWaitMs: 1_000) }
            // Copies are refused too: the pushes on the mailbox subject, the victim's replies.
            let copied = try hostile.rawSubscribeReceives(rig.mailbox.subject, within: 2_000) { try send("while watched") }
            #expect(!copied)
            #expect(hostile.lastError.contains("Permissions Violation for Subscription to \"\(rig.mailbox.subject)\""), "\(hostile.lastError)")
            #expect(!hostile.rawSubscribeReceives("_INBOX.\(victim.durable).>", within: 500) {})
            #expect(hostile.lastError.contains("Permissions Violation for Subscription to \"_INBOX.\(victim.durable).>\""), "\(hostile.lastError)")

            for index in 0..<3 { try send("after \(index)") }
            try waitUntil("every message stored", timeout: 60) { try rig.storedMessageIds().count >= sent.count }
            #expect(try rig.storedMessageIds() == sent)
            // Still the victim's consumer, and nothing left behind for it.
            try waitUntil("the mailbox is empty", timeout: 20) {
                let state = try rig.publisher().consumerState(victim)
                let stored = try rig.publisher().storedCount(rig.mailbox)
                return state?.pending == 0 && state?.ackPending == 0 && stored == 0
            }
            #expect(rig.relaydOutput.contains { $0.contains("cannot") || $0.contains("Violation") } == false,
                    "\(rig.relaydOutput.filter { $0.contains("cannot") || $0.contains("Violation") })")
        }
    }

    @Test("an identity's relay key file that is garbage or readable by others: relayd says so without quoting it and leaves that mailbox alone")
    func garbageIdentityKey() async throws {
        try await onOwnThread {
            guard let rig = try RelayRig.make(operatorMode: true) else { return }
            defer { rig.tearDown() }
            let directory = rig.fixture.group.path + "/relayd-users"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/\(rig.mailbox.clientId).nk"
            let secretLooking = Nkey.generate(.user).seedText
            for (text, mode, why) in [(String(secretLooking.prefix(40)) + "garbage!!\n", 0o600, "not one user seed"),
                                      (secretLooking + "\n", 0o644, "is readable by others")] {
                try? FileManager.default.removeItem(atPath: path)
                FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
                try rig.startRelayd(waitForMailbox: false)
                try waitUntil("relayd refused the key", timeout: 30) {
                    rig.relaydOutput.contains { $0.contains("cannot use the relay key of \(rig.mailbox)") && $0.contains(why) }
                }
                #expect(!rig.relaydOutput.contains { $0.contains(secretLooking.prefix(20)) }, "a seed was logged")
                #expect(!rig.relaydOutput.contains { $0.contains("identity added: \(rig.mailbox)") })
                #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "the key file was replaced")
                rig.stopRelayd()
            }
        }
    }

    /// docs/adr/0047 deletes and makes again a consumer left with unacked messages; a member
    /// that keeps trying to create a consumer of its own on the victim's subject got it in that
    /// gap at the first attempt (measured with a script against 2.9.10). With per-identity
    /// users relayd keeps the consumer, waits the relay's ack wait and restores the order.
    @Test("relayd killed with a batch delivered and unacked while a hostile member keeps trying to take the subject: the consumer stays the victim's, every message stored once, in order")
    func recoveryLeavesNoGap() async throws {
        try await onOwnThread {
            guard let rig = try RelayRig.make(operatorMode: true), let setup = rig.operatorSetup else { return }
            defer { rig.tearDown() }
            var sent: [String] = []
            for index in 0..<300 {
                let push = try rig.fixture.sealTextForRelay("unacked \(index)")
                try rig.publish(push)
                sent.append(push.messageId)
            }
            // The worker waits on this lock, so relayd holds its first batch delivered and unacked.
            let sqlite = try ChildProcess.launch("/usr/bin/sqlite3", [rig.fixture.group.databasePath])
            sqlite.write("PRAGMA busy_timeout=5000;\nBEGIN IMMEDIATE;\nSELECT 'locked';\n")
            #expect(sqlite.waitForLine(containing: "locked") != nil)
            try rig.startPushSocket(acceptYes: true, extraEnvironment: ["SOTTO_BUSY_TIMEOUT_MS": "25000"])
            let arguments = ["--ack-wait-ms", "4000", "--retry-min-ms", "100"]
            try rig.startRelayd(arguments: arguments)
            let victim = try rig.ownedMailbox()
            try waitUntil("a batch delivered to the worker", timeout: 60) {
                (try rig.publisher().consumerState(victim)?.ackPending ?? 0) > 0
            }
            rig.killRelayd()
            for pid in Workers.running(groupDirectory: rig.fixture.group.path) { kill(pid, SIGKILL) }
            sqlite.write("ROLLBACK;\n.quit\n")
            #expect(sqlite.waitForExit() == 0)
            let unacked = try #require(try rig.publisher().consumerState(victim)).ackPending
            #expect(unacked > 0)

            let hostileKey = Nkey.generate(.user)
            let hostile = try RelayConnection.connect(try setup.deviceConfiguration(rig.server), user: hostileKey)
            defer { hostile.close() }
            let subject = "$JS.API.CONSUMER.DURABLE.CREATE.\(Mailbox.streamName).\(hostileKey.publicKey)"
            let config = Self.consumerConfig(durable: hostileKey.publicKey, filter: rig.mailbox.subject)
            let tally = Mutex((tries: 0, wins: 0, stop: false))
            let finished = DispatchSemaphore(value: 0)
            let spammer = Thread {
                defer { finished.signal() }
                while !tally.withLock({ $0.stop }) {
                    let answer = hostile.rawRequest(subject, config, timeoutMs: 1_000)
                    let won = answer.reply.map { !$0.contains(#""error""#) } ?? false
                    tally.withLock { $0.tries += 1; if won { $0.wins += 1 } }
                }
            }
            spammer.start()
            defer {  // before the connection closes (deferred earlier, so run later)
                tally.withLock { $0.stop = true }
                finished.wait()
            }
            try waitUntil("the hostile member is trying", timeout: 10) { tally.withLock { $0.tries } > 10 }
            try rig.startRelayd(arguments: arguments)
            try waitUntil("every message stored", timeout: 120) { try rig.storedMessageIds().count >= sent.count }
            let result = tally.withLock { ($0.tries, $0.wins) }
            #expect(result.1 == 0, "the hostile member created a consumer on the victim's subject")
            #expect(result.0 > 100, "only \(result.0) attempts")
            #expect(try rig.storedMessageIds() == sent)
            #expect(rig.relaydOutput.contains { $0.contains("\(unacked) messages of \(rig.mailbox) were delivered and not acked; they come back") })
            #expect(try rig.publisher().consumerState(victim) != nil)
        }
    }

    static func consumerConfig(durable: String?, filter: String) -> String {
        let name = durable.map { #""durable_name":"\#($0)","# } ?? ""
        return #"{"stream_name":"\#(Mailbox.streamName)","config":{\#(name)"ack_policy":"explicit","deliver_policy":"all","filter_subject":"\#(filter)"}}"#
    }
}
