import Foundation
import RelayTransport
import SharedStore
import SottoWire
import TestSupport
import Testing

/// The sending half (docs/adr/0028) with real processes: two devices, each a real daemon with
/// `SOTTO_RELAY`, a real sotto-relayd and the real worker, and one nats-server -js. Each test
/// skips (prints why) when nats-server is not installed.
@Suite("Relay sending", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelaySendingTests {
    @Test("alice and bob on a relay: invite, join and messages both ways arrive; with receipts off read shows relayed")
    func bothWays() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        let trip = try peers.diagnosed { try peers.conversation(creator: "alice", joiner: "bob") }
        // Without receipts `relayed` is where a push through a relay ends (with them it
        // becomes `delivered`: RelayReceiptTests).
        for name in ["alice", "bob"] { _ = try peers[name].json(["receipts", trip, "--off"]) }

        let hello = try peers.send("alice", trip, "hello bob")
        try peers["bob"].waitUntil("bob has alice's message", timeoutMs: 30_000) {
            peers.receivedTexts("bob", trip) == ["hello bob"]
        }
        let answer = try peers.send("bob", trip, "hi alice")
        try peers["alice"].waitUntil("alice has bob's answer", timeoutMs: 30_000) {
            peers.receivedTexts("alice", trip) == ["hi alice"]
        }

        for (name, id) in [("alice", hello), ("bob", answer)] {
            let shown = try #require(peers.message(name, trip, id: id))
            #expect(shown["deliveryStatus"] as? String == "relayed")
            let deliveries = try #require(shown["deliveries"] as? [[String: Any]])
            #expect(deliveries.count == 1)
            #expect(deliveries.first?["state"] as? String == "relayed")
            #expect(try peers.outboxStates(name, messageId: id).map(\.state) == ["relayed"])
        }
        // The relay gave both pushes to their devices: nothing stays on it.
        try peers["alice"].waitUntil("the relay is empty") { try peers.relay().storedCount() == 0 }
        // The human form shows the state too.
        let read = try peers["alice"].cli(["read", trip])
        #expect(read.status == 0)
        #expect(read.stdout.contains("hello bob (relayed)"))
    }

    @Test("bob offline (relayd and daemon stopped): alice's 3 messages wait on the relay, then arrive once each, in order")
    func offlineRecipient() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bobBox = try peers.mailbox("bob", trip)
            peers.stopRelayd("bob")
            peers["bob"].stopDaemon()
            // bob's join request opened his relay connection; his own stop closing it is no loss.
            #expect(!peers["bob"].daemonLog.contains("connection lost"), "\(peers["bob"].daemonLog)")

            let texts = ["one", "two", "three"]
            let ids = try texts.map { try peers.send("alice", trip, $0) }
            try peers["alice"].waitUntil("all 3 relayed", timeoutMs: 30_000) {
                try ids.allSatisfy { try peers.outboxStates("alice", messageId: $0).map(\.state) == ["relayed"] }
            }
            #expect(ids.allSatisfy { peers.message("alice", trip, id: $0)?["deliveryStatus"] as? String == "relayed" })
            #expect(try peers.relay().storedCount(bobBox) == 3)
            #expect(try peers.storedTexts("bob", trip).isEmpty)

            try peers["bob"].startDaemon()
            try peers.startRelayd("bob")
            try peers["bob"].waitUntil("bob stored 3", timeoutMs: 60_000) { try peers.storedTexts("bob", trip).count >= 3 }
            #expect(try peers.storedTexts("bob", trip) == texts)
            try peers["bob"].waitUntil("bob's mailbox is empty") { try peers.relay().storedCount(bobBox) == 0 }
            #expect(peers.receivedTexts("bob", trip) == texts)
        }
    }

    @Test("the relay down when alice sends: pending (read says why), then relayed and delivered once when it is back")
    func relayDownWhenSending() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            peers.server.stop()

            let id = try peers.send("alice", trip, "while the relay is down")
            try peers["alice"].waitUntil("a failed attempt is recorded", timeoutMs: 30_000) {
                try peers.outboxStates("alice", messageId: id).first?.lastError != nil
            }
            #expect(try peers.outboxStates("alice", messageId: id).map(\.state) == ["pending"])
            let shown = try #require(peers.message("alice", trip, id: id))
            #expect(shown["deliveryStatus"] as? String == "pending")
            let delivery = try #require((shown["deliveries"] as? [[String: Any]])?.first)
            #expect((delivery["lastError"] as? String)?.contains(peers.server.url) == true)
            let human = try peers["alice"].cli(["read", trip])
            #expect(human.stdout.contains("while the relay is down (pending; relay \(peers.server.url)"))

            // A relay that is down does not hold up the daemon's stop (its connection is
            // reconnecting), and the pending push survives the restart.
            let alice = peers["alice"]
            let pid = try #require(alice.daemonPID)
            kill(pid, SIGTERM)
            try alice.waitUntil("alice's daemon stopped after SIGTERM", timeoutMs: 20_000) { !alice.daemonIsRunning }
            #expect(alice.daemonKillSignal == nil)
            alice.stopDaemon()
            try alice.startDaemon()

            try peers.server.restart()
            try peers["alice"].waitUntil("relayed", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: id).map(\.state) == ["relayed"]
            }
            try peers["bob"].waitUntil("bob stored it", timeoutMs: 60_000) { try peers.storedTexts("bob", trip).count >= 1 }
            try peers["bob"].waitUntil("bob's mailbox is empty") { try peers.relay().storedCount(try peers.mailbox("bob", trip)) == 0 }
            #expect(try peers.storedTexts("bob", trip) == ["while the relay is down"])
        }
    }

    @Test("alice's daemon SIGKILLed after the relay's ack, before the row says relayed: the republish is de-duplicated")
    func crashBetweenAckAndRecord() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let bobBox = try peers.mailbox("bob", trip)
            peers.stopRelayd("bob")  // so both publishes would stay on the relay, countable
            let alice = peers["alice"]
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: "outbox.relayed"])

            let id = try peers.send("alice", trip, "published twice")
            try alice.waitUntil("alice's daemon killed itself at the crash point", timeoutMs: 30_000) { !alice.daemonIsRunning }
            alice.stopDaemon()
            #expect(try peers.outboxStates("alice", messageId: id).map(\.state) == ["pending"])
            #expect(try peers.relay().storedCount(bobBox) == 1)

            try alice.startDaemon()
            try alice.waitUntil("relayed after the restart", timeoutMs: 30_000) {
                try peers.outboxStates("alice", messageId: id).map(\.state) == ["relayed"]
            }
            // The attempt count shows the republish happened; the relay kept one copy.
            #expect(try alice.query("SELECT attempts FROM outbox WHERE messageId = ?", [.text(id)]).first?.int64(0) == 1)
            #expect(try peers.relay().storedCount(bobBox) == 1)

            try peers.startRelayd("bob")
            try peers["bob"].waitUntil("bob stored it", timeoutMs: 30_000) { try peers.storedTexts("bob", trip).count >= 1 }
            try peers["bob"].waitUntil("bob's mailbox is empty") { try peers.relay().storedCount(bobBox) == 0 }
            #expect(try peers.storedTexts("bob", trip) == ["published twice"])
        }
    }

    @Test("a malformed SOTTO_RELAY or relay credentials: the daemon exits 78 with a clear message and writes nothing")
    func malformedRelaySetting() throws {
        let tmp = try TemporaryDirectory(prefix: "rs-bad")
        defer { tmp.remove() }
        let cases: [([String: String], String)] = [
            (["SOTTO_RELAY": "http://relay.example:4222"], "malformed relay URL"),
            (["SOTTO_RELAY": "nats://relay.example:99999"], "malformed relay URL"),
            (["SOTTO_RELAY": "nats://user:secret@relay.example:4222"], "malformed relay URL"),
            (["SOTTO_RELAY": "nats://relay\u{1}.example:4222"], "malformed relay URL"),
            (["SOTTO_RELAY": "nats://relay.example:4222", "SOTTO_RELAY_USER": "me"], "malformed relay credentials"),
            (["SOTTO_RELAY": "nats://relay.example:4222", "SOTTO_RELAY_CREDS": tmp.path + "/missing.creds"],
             "malformed relay credentials"),
        ]
        for (index, (relay, expected)) in cases.enumerated() {
            let root = tmp.path + "/case\(index)"
            let environment = ["SOTTO_KEY_STORE": "file", "SOTTO_GROUP_DIR": root + "/group", "SOTTO_RUNTIME_DIR": root + "/run", "PATH": "/usr/bin:/bin"]
                .merging(relay) { $1 }
            let daemon = try LoggedProcess.launch(try builtExecutable("sotto"), ["daemon"], environment: environment)
            // A daemon that took the setting would serve forever: give it 20 s, then fail.
            let stopped = (try? waitUntil("the daemon exits", timeout: 20) { !daemon.isRunning }) != nil
            if !stopped { daemon.signal(SIGKILL) }
            let status = daemon.waitForExit()
            let stderr = daemon.output.joined(separator: "\n")
            #expect(stopped && status == 78, "case \(index): \(stderr)")
            #expect(stderr.contains(expected), "case \(index): \(stderr)")
            #expect(!stderr.contains("secret"), "case \(index) printed the password")
            #expect(!FileManager.default.fileExists(atPath: root), "case \(index) wrote \(root)")
        }
    }

    @Test("garbage relay endpoints in the outbox: failed or pending with a clear error, the daemon keeps serving")
    func garbageRelayEndpoints() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let id = try peers.send("alice", trip, "a message with strange pushes")
            let alice = peers["alice"]
            // Relayed, then delivered once bob's receipt is back (receipts are on by default).
            try alice.waitUntil("relayed", timeoutMs: 30_000) {
                [["relayed"], ["delivered"]].contains(try peers.outboxStates("alice", messageId: id).map(\.state))
            }
            let sent = try #require(try alice.query("SELECT payload, clientId FROM outbox WHERE messageId = ?", [.text(id)]).first)
            let payload = try sent.blob(0), clientId = try sent.string(1)

            // Rows no honest peer could make (the worker checks every endpoint it stores), put
            // in while the daemon is stopped: its first pass takes them. The one that is no push
            // names no clientId, as an outbox row from before schema v13 whose payload did not decode.
            alice.stopDaemon()
            let rows: [(member: String, endpoint: String, clientId: String?, payload: [UInt8])] = [
                ("g1-bad-port", "nats://127.0.0.1:99999", clientId, payload),
                ("g2-bad-host", "nats://bad host!:4222", clientId, payload),
                ("g3-control", "tls://relay\u{1}.example:1", clientId, payload),
                ("g4-no-such-host", "nats://no-such-host.invalid:4222", clientId, payload),
                ("g5-not-a-push", peers.server.url, nil, Array("{\"garbage\":true}".utf8)),
                ("g6-empty", "nats://", clientId, []),
            ]
            let conn = try SQLiteConnection.open(path: alice.group.databasePath, profile: .worker)
            for row in rows {
                try conn.run("""
                    INSERT INTO outbox(messageId, memberInboxId, endpoint, clientId, payload, state, attempts, nextAttemptAt)
                    VALUES (?, ?, ?, ?, ?, 'pending', 0, 0)
                    """, [.text(id), .text(row.member), .text(row.endpoint), .optional(row.clientId), .blob(row.payload)])
            }
            try alice.startDaemon()
            try alice.waitUntil("every row attempted", timeoutMs: 30_000) {
                try alice.query("SELECT count(*) FROM outbox WHERE messageId = ? AND attempts = 0", [.text(id)]).first?.int64(0) == 0
            }
            let states = Dictionary(uniqueKeysWithValues: try alice.query(
                "SELECT memberInboxId, state, lastError FROM outbox WHERE messageId = ?", [.text(id)])
                .map { (try $0.string(0), (try $0.string(1), try $0.optionalString(2) ?? "")) })
            for member in ["g1-bad-port", "g2-bad-host", "g3-control", "g6-empty"] {
                #expect(states[member]?.0 == "failed", "\(member): \(String(describing: states[member]))")
                #expect(states[member]?.1.contains("malformed relay URL") == true, "\(member): \(String(describing: states[member]))")
            }
            #expect(states["g3-control"]?.1.contains("\u{1}") == false)
            #expect(states["g4-no-such-host"]?.0 == "pending")
            #expect(states["g4-no-such-host"]?.1.contains("relay nats://no-such-host.invalid:4222") == true)
            #expect(states["g5-not-a-push"]?.0 == "failed")
            #expect(states["g5-not-a-push"]?.1.contains("names no mailbox") == true)

            // Still serving: a new message goes out through the relay as before.
            let next = try peers.send("alice", trip, "still here")
            try peers["bob"].waitUntil("bob has the next message", timeoutMs: 30_000) {
                try peers.storedTexts("bob", trip).contains("still here")
            }
            // Relayed, or already delivered if bob's receipt came back (docs/protocol/receipts.md).
            #expect(try ["relayed", "delivered"].contains(peers.outboxStates("alice", messageId: next).map(\.state).first ?? "-"))
            #expect(alice.daemonIsRunning)
            let shown = try #require(peers.message("alice", trip, id: id))
            #expect(shown["deliveryStatus"] as? String == "pending")
            #expect((shown["deliveries"] as? [[String: Any]])?.count == 7)
        }
    }

    @Test("a relay that requires a password: each daemon logs in with its own credentials, messages are relayed")
    func relayWithPassword() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"], user: "sotto", password: "s3cret-pw") else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            #expect(throws: RelayError.self) {
                try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(peers.server.url))).close()
            }
            let trip = try peers.conversation(creator: "alice", joiner: "bob")
            let id = try peers.send("alice", trip, "behind a password")
            try peers["bob"].waitUntil("bob has it", timeoutMs: 30_000) { try peers.storedTexts("bob", trip) == ["behind a password"] }
            #expect(try ["relayed", "delivered"].contains(peers.outboxStates("alice", messageId: id).map(\.state).first ?? "-"))
            #expect(!peers["alice"].daemonLog.contains("s3cret-pw"))
        }
    }

    @Test("our credentials go to our own relay only: bob's join request to alice's relay is sent without them")
    func credentialsOnlyForOwnRelay() throws {
        // Both relays take the same user and password, so only a daemon that (wrongly) sent
        // its own credentials to alice's relay would get in.
        guard let peers = try RelayPeers.make(["alice"], user: "sotto", password: "s3cret-pw") else { return }
        defer { peers.tearDown() }
        let other = try NatsServer.prepare(storeDirectory: peers.tmp.path + "/other-js", extraArguments: ["--user", "sotto", "--pass", "s3cret-pw"])
        try other.restart()
        defer { other.stop() }
        let bob = try Device.start("bob", in: peers.tmp.path, environment: [
            "SOTTO_RELAY": other.url, RelayCredentials.userVariable: "sotto", RelayCredentials.passwordVariable: "s3cret-pw",
        ])
        defer { bob.stop() }
        try peers.diagnosed {
            let alice = peers["alice"]
            guard let id = try alice.json(["new", "--name", "Two relays"])["conversationId"] as? String,
                  let code = try alice.json(["invite", id, "--expires", "1h"])["code"] as? String else {
                throw RelayRigFailure("new or invite returned no id")
            }
            _ = try bob.json(["join", code, "--profile-name", "bob"])
            try bob.waitUntil("the join request attempted", timeoutMs: 30_000) {
                try bob.query("SELECT 1 FROM outbox WHERE attempts > 0").count == 1
            }
            let row = try #require(try bob.query("SELECT endpoint, state, lastError FROM outbox").first)
            #expect(try row.string(0) == peers.server.url)
            #expect(try row.string(1) == "pending")
            #expect(try row.optionalString(2)?.lowercased().contains("authorization") == true)
            #expect(try peers.relay().storedCount() == 0)
        }
    }
}
