import Foundation
import RelayTransport
import TestSupport
import Testing

/// Issue #19 goal 1 and 6, docs/adr/0056: only the inboxes the daemon keeps awake hold a relay
/// connection; a sleeping inbox's mailbox is drained by a short connection of its own within
/// relayd's bound. All real: two daemons (capacity 2) with their workers and relayds, and
/// nats-server with its monitoring and protocol trace.
@Suite("Relay: sleeping inboxes", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelaySleepingInboxTests {
    @Test("alice keeps 2 of 5 inboxes awake: her relayd watches exactly those 2 mailboxes; bob's push to a sleeping one is drained on short connections of its own; the inbox that wakes gets its connection; no connection touches two of her conversations")
    func onlyAwakeInboxesHoldConnections() async throws {
        try await onOwnThread { try self.steps() }
    }

    private static let boundMs = 3_000

    private func steps() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"], observed: true, daemonArguments: ["--capacity", "2"],
                                              relaydArguments: ["--sleeping-drain-ms", "\(Self.boundMs)"]) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trips = try (0..<5).map { _ in try peers.conversation(creator: "alice", joiner: "bob", revokeInvites: true) }
            var groups: [String: String] = [:]
            for trip in trips {
                for device in ["alice", "bob"] { groups[try peers.mailbox(device, trip).clientId] = trip }
            }
            let alice = Set(try trips.map { try peers.mailbox("alice", $0).clientId })
            let marks = { Set((try? FileManager.default.contentsOfDirectory(atPath: peers["alice"].group.awakeMailboxesPath)) ?? []) }

            try waitUntil("alice's daemon marks 2 awake inboxes and her relayd watches exactly their mailboxes", timeout: 60) {
                let awake = marks()
                let watched = try Self.watched(peers, of: alice)
                return awake.count == 2 && awake.isSubset(of: alice) && watched == awake
            }

            // A push to a sleeping inbox waits for its mailbox's next drain.
            guard let asleep = try trips.first(where: { !marks().contains(try peers.mailbox("alice", $0).clientId) }) else {
                Issue.record("no sleeping inbox")
                return
            }
            let asleepId = try peers.mailbox("alice", asleep).clientId
            let sentAt = Date()
            _ = try peers.send("bob", asleep, "to a sleeping inbox")
            try peers["alice"].waitUntil("alice stored the push to her sleeping inbox", timeoutMs: 60_000) {
                try peers.storedTexts("alice", asleep).contains("to a sleeping inbox")
            }
            print("SLEEPING push to a sleeping inbox stored after \(Int(Date().timeIntervalSince(sentAt) * 1_000)) ms (bound \(Self.boundMs) ms)")

            // alice writes in it: the inbox wakes (its identity signs), and its mailbox gets a
            // connection that watches it, while the inbox it evicted loses its own.
            _ = try peers.send("alice", asleep, "awake again")
            try waitUntil("the woken inbox is marked and watched, and only the awake ones are", timeout: 60) {
                let awake = marks()
                let watched = try Self.watched(peers, of: alice)
                return awake.contains(asleepId) && awake.count == 2 && watched == awake
            }
            _ = try peers.send("bob", asleep, "to the woken inbox")
            try peers["alice"].waitUntil("alice stored the push to her woken inbox", timeoutMs: 60_000) {
                try peers.storedTexts("alice", asleep).contains("to the woken inbox")
            }

            // From the relay's records: the sleeping mailbox was drained on connections that
            // closed again, and none of alice's connections touched two conversations.
            let seen = try RelayLinkage.observe(server: peers.server)
            let drains = seen.connections.values.filter { Set($0.subjects.flatMap(RelayLinkage.clientIds) + $0.payloadIds).contains(asleepId) }
            print("SLEEPING connections that touched the sleeping mailbox: \(drains.count)")
            #expect(drains.count >= 2, "the sleeping mailbox was drained on connections of its own")
            for connection in seen.connections.values where !connection.name.hasPrefix("test-") {
                let touched = seen.groups(of: connection, in: groups)
                #expect(touched.count <= 1, "connection \(connection.cid) touches \(touched.count) conversations")
            }
        }
    }

    /// The clientIds among `clientIds` whose mailbox an open connection watches (`/connz`).
    private static func watched(_ peers: RelayPeers, of clientIds: Set<String>) throws -> Set<String> {
        let open = try RelayLinkage.openConnections(server: peers.server)
        return Set(open.flatMap { $0.subscriptions.compactMap { Mailbox(subject: $0)?.clientId } }).intersection(clientIds)
    }
}
