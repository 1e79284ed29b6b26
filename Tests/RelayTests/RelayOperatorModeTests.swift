import Foundation
import Synchronization
import RelayTransport
import SharedStore
import SottoCrypto
import TestSupport
import Testing

/// Two real devices on a relay in operator mode (docs/adr/0051): each daemon and relayd has
/// the relay's signing key and nothing else; relayd logs in as each identity's own user,
/// whose consumer is named by that user's key, and the daemon as a fresh user per connection.
/// Everything a relay does today still works: joining, sending, receipts, catch-up, explode
/// with a member offline and the mailbox's retirement.
@Suite("Relay operator mode", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayOperatorModeTests {
    @Test("per-identity users: join and send end delivered, catch-up after relayd was away, each consumer named by its identity's own key")
    func sendAndCatchUp() async throws {
        try await withTrip { peers, trip in
            let sent = try peers.send("alice", trip, "through an operator-mode relay")
            try peers["alice"].waitUntil("bob's receipt came back", timeoutMs: 60_000) {
                try peers.outboxStates("alice", messageId: sent).map(\.state) == ["delivered"]
            }

            // Each mailbox's consumer is named by its own identity's relay user, not by clientId.
            let relay = try peers.relay()
            var owners: Set<String> = []
            for name in ["alice", "bob"] {
                let mailbox = try peers.mailbox(name, trip)
                let user = try peers.relayUser(name, clientId: mailbox.clientId)
                #expect(try relay.consumerState(mailbox.owned(by: user.publicKey)) != nil, "\(name)'s consumer")
                #expect(try relay.consumerState(mailbox) == nil, "\(name) has no consumer named by its clientId")
                owners.insert(user.publicKey)
            }
            #expect(owners.count == 2)

            peers.stopRelayd("bob")
            var queued: [String] = []
            for index in 0..<5 { queued.append(try peers.send("alice", trip, "queued \(index)")) }
            try peers["alice"].waitUntil("all relayed", timeoutMs: 60_000) {
                try queued.allSatisfy { try peers.outboxStates("alice", messageId: $0).map(\.state) == ["relayed"] }
            }
            try peers.startRelayd("bob")
            try peers["alice"].waitUntil("all delivered", timeoutMs: 60_000) {
                try queued.allSatisfy { try peers.outboxStates("alice", messageId: $0).map(\.state) == ["delivered"] }
            }
            #expect(try peers.storedTexts("bob", trip) == ["through an operator-mode relay"] + (0..<5).map { "queued \($0)" })
        }
    }

    @Test("explode with bob offline: on his return the conversation goes, and relayd drains his mailbox through its own consumer, then deletes it and its key")
    func explodeOfflineMemberRetiresByDraining() async throws {
        try await withTrip { peers, trip in
            let bobMailbox = try peers.mailbox("bob", trip)
            let bobUser = try peers.relayUser("bob", clientId: bobMailbox.clientId)
            let owned = bobMailbox.owned(by: bobUser.publicKey)
            peers.stopRelayd("bob")
            _ = try peers["alice"].json(["explode", trip])
            try peers["alice"].waitUntil("the explode relayed", timeoutMs: 60_000) {
                try peers.relay().storedCount(bobMailbox) >= 1
            }
            try peers.startRelayd("bob")
            try peers["bob"].waitUntil("Trip deleted on bob", timeoutMs: 90_000) { try peers["bob"].conversation(trip) == nil }
            // Within relayd's 10 s before it retires the mailbox: one more push it cannot hand
            // over (the push socket is down), so the retirement has something to drain.
            peers["bob"].stopPushSocket()
            _ = try peers.relay().publish(Array(repeating: 7, count: 64), to: bobMailbox, messageId: "stranded-1")
            try expectRetired(peers, bobMailbox, owned)
        }
    }

    @Test("bob leaves while his relayd is stopped: the restarted relayd finds the identity gone, drains the mailbox with the key it kept, deletes consumer and key")
    func retireAfterRestart() async throws {
        try await withTrip { peers, trip in
            let bobMailbox = try peers.mailbox("bob", trip)
            let owned = bobMailbox.owned(by: try peers.relayUser("bob", clientId: bobMailbox.clientId).publicKey)
            peers.stopRelayd("bob")
            _ = try peers.relay().publish(Array(repeating: 7, count: 64), to: bobMailbox, messageId: "left-behind-1")
            _ = try peers["bob"].json(["leave", trip])
            try peers["bob"].waitUntil("Trip gone on bob", timeoutMs: 60_000) { try peers["bob"].conversation(trip) == nil }

            try peers.startRelayd("bob")
            try expectRetired(peers, bobMailbox, owned)
            #expect(peers.relaydOutput("bob").contains { $0.contains("identity left the keystore while relayd was away; retiring: \(bobMailbox)") })
        }
    }

    @Test("no relay user is shared by two identities: each relayd connection logs in as its identity's own key, all issued by the one signing key every device has")
    func oneUserPerIdentity() async throws {
        let problems = try await onOwnThread { () -> [String]? in
            guard let peers = try RelayPeers.make(["alice", "bob"], observed: true, operatorMode: true,
                                                  environment: ["SOTTO_RELAY_IDLE_MS": "60000"]) else { return nil }
            defer { peers.tearDown() }
            return try peers.diagnosed {
                let trips = try (0..<3).map { _ in try peers.conversation(creator: "alice", joiner: "bob") }
                for trip in trips { try peers.send("alice", trip, "hello") }
                var expected: [String: String] = [:]  // clientId -> its relayd user
                for trip in trips {
                    for name in ["alice", "bob"] {
                        let box = try peers.mailbox(name, trip)
                        expected[box.clientId] = try peers.relayUser(name, clientId: box.clientId).publicKey
                    }
                }
                let signer = try RelaySigningKey.load(path: peers.operatorSetup!.signingKeyPath).publicKey
                var problems: [String] = []
                var userOwner: [String: String] = [:]
                let devices = try RelayLinkage.openUsers(server: peers.server).filter { !$0.name.hasPrefix("test-") }
                for connection in devices {
                    if connection.issuer != signer { problems.append("user \(connection.user) issued by \(connection.issuer)") }
                    let woken = connection.subscriptions.filter { $0.hasPrefix(Mailbox.wakePrefix) }
                        .map { String($0.dropFirst(Mailbox.wakePrefix.count)) }
                    if woken.count > 1 { problems.append("\(connection.user) watches \(woken.count) mailboxes") }
                    if let clientId = woken.first, expected[clientId] != connection.user {
                        problems.append("mailbox \(clientId) watched by \(connection.user), not its identity's user")
                    }
                    let identity = woken.first ?? "daemon"
                    if let other = userOwner[connection.user], other != identity || identity == "daemon" {
                        problems.append("user \(connection.user) on two connections (\(other), \(identity))")
                    }
                    userOwner[connection.user] = identity
                }
                if Set(expected.values).count != 6 { problems.append("\(Set(expected.values).count) distinct relayd users for 6 identities") }
                if devices.filter({ $0.subscriptions.contains { $0.hasPrefix(Mailbox.wakePrefix) } }).count != 6 {
                    problems.append("expected 6 identity connections, saw \(devices.map(\.subscriptions))")
                }
                return problems
            }
        }
        guard let problems else { return }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("logins under load: 1,024 fresh users minted with the signing key, 8 connecting at once, are all let in (issue #32: nats.c dropped a nonce signature starting with 0, one login in 256 was refused)")
    func concurrentLoginsAreNeverRefused() async throws {
        let refusals = try await onOwnThread { () -> [String]? in
            guard NatsServer.isInstalled else { return nil }
            let tmp = try TemporaryDirectory(prefix: "sotto-op-logins")
            defer { tmp.remove() }
            let setup = try RelayOperatorSetup.make(directory: tmp.path + "/relay-operator")
            let server = try setup.startServer(storeDirectory: tmp.path + "/jetstream")
            defer { server.stop() }
            let configuration = try setup.deviceConfiguration(server)
            let refused = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                for _ in 0..<128 {
                    var options = RelayConnection.Options()
                    options.connectTimeoutMs = 30_000  // load may slow a login; only a refusal counts
                    do {
                        let connection = try RelayConnection.connect(configuration, options: options)
                        // The user's own scope works: its consumer's info is asked (none exists).
                        _ = try connection.consumerState(Mailbox(clientId: UUID().uuidString.lowercased()).owned(by: connection.userPublicKey!))
                        connection.close()
                    } catch {
                        refused.withLock { $0.append("\(error)") }
                    }
                }
            }
            let problems = refused.withLock { $0 }
            if !problems.isEmpty {
                print(server.log.filter { NatsServer.isProblemLine($0) || $0.contains("CONNECT") && $0.contains("Signature") }
                    .suffix(20).joined(separator: "\n"))
                if ProcessInfo.processInfo.environment["SOTTO_TEST_NATS_DEBUG"] == "trace" {
                    try? server.log.joined(separator: "\n").write(toFile: "/tmp/flake/nats-trace.log", atomically: true, encoding: .utf8)
                }
            }
            return problems
        }
        guard let refusals else { return }
        #expect(refusals.isEmpty, "\(refusals.count) of 1,024 logins failed, first: \(refusals.prefix(3))")
    }

    // MARK: - Set-up

    /// alice and bob on an operator-mode relay, bob joined to alice's conversation `trip`.
    private func withTrip(_ body: @escaping @Sendable (RelayPeers, String) throws -> Void) async throws {
        try await onOwnThread {
            guard let peers = try RelayPeers.make(["alice", "bob"], operatorMode: true) else { return }
            defer { peers.tearDown() }
            try peers.diagnosed { try body(peers, try peers.conversation(creator: "alice", joiner: "bob")) }
        }
    }

    /// relayd retired bob's mailbox: drained, its consumer deleted, and bob's relay key for it gone.
    private func expectRetired(_ peers: RelayPeers, _ bobMailbox: Mailbox, _ owned: Mailbox) throws {
        try waitUntil("relayd retired bob's mailbox", timeout: 60) {
            peers.relaydOutput("bob").contains { $0.contains("mailbox drained (") && $0.contains("consumer deleted: \(bobMailbox)") }
        }
        #expect(try peers.relay().consumerState(owned) == nil)
        #expect(try peers.relay().storedCount(bobMailbox) == 0)
        #expect(!FileManager.default.fileExists(atPath: peers["bob"].group.path + "/relayd-users/\(bobMailbox.clientId).nk"))
    }
}
