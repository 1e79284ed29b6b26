import Foundation
import RelayTransport
import TestSupport
import Testing

/// Issue #19 goal 4, seen from the relay: after the relay restarts, a device's identity
/// connections do not come back together. nats.c's own jitter (100 ms) brought all of one
/// device's connections back within a fraction of a second, which tied them together; each now
/// waits a random part of `RelayConnection.Options.identityReconnectJitterMs` (5 s) of its own.
@Suite("Relay: reconnects are spread", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayReconnectJitterTests {
    @Test("the relay restarts: each of a device's 8 mailbox connections comes back at its own moment, spread over more than a second (nats-server's /connz)")
    func reconnectsAreSpread() async throws {
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"], observed: true) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let trips = try (0..<8).map { _ in try peers.conversation(creator: "alice", joiner: "bob") }
            let alice = Set(try trips.map { try peers.mailbox("alice", $0).clientId })
            try waitUntil("alice's relayd watches 8 mailboxes", timeout: 60) { try Self.starts(peers, of: alice).count == 8 }

            peers.server.stop()
            try peers.server.restart()
            try waitUntil("alice's 8 mailbox connections are back", timeout: 60) { try Self.starts(peers, of: alice).count == 8 }
            let starts = try Self.starts(peers, of: alice).sorted()
            let spreadMs = Int((starts.last! - starts.first!) * 1_000)
            print("RECONNECT spread of alice's 8 mailbox connections after a relay restart: \(spreadMs) ms "
                  + "(gaps \(zip(starts, starts.dropFirst()).map { Int(($1 - $0) * 1_000) }) ms)")
            #expect(spreadMs > 1_000, "all of alice's connections came back within \(spreadMs) ms")
            // Still delivered after it.
            _ = try peers.send("bob", trips[0], "after the restart")
            try peers["alice"].waitUntil("alice stored it", timeoutMs: 60_000) {
                try peers.storedTexts("alice", trips[0]).contains("after the restart")
            }
        }
    }

    /// When each connection watching one of `clientIds`' mailboxes started (seconds, /connz).
    static func starts(_ peers: RelayPeers, of clientIds: Set<String>) throws -> [Double] {
        guard let port = peers.server.monitorPort else { throw RelayRigFailure("no monitoring port") }
        let connz = try NatsMonitor(port: port).json("/connz?subs=1&limit=100000")
        return (connz["connections"] as? [[String: Any]] ?? []).compactMap { connection in
            let watched = (connection["subscriptions_list"] as? [String] ?? []).compactMap { Mailbox(subject: $0)?.clientId }
            guard watched.contains(where: clientIds.contains), let start = connection["start"] as? String else { return nil }
            return Self.seconds(rfc3339: start)
        }
    }

    /// "2026-11-25T13:30:00.123456789Z" → seconds since the epoch (fraction kept).
    static func seconds(rfc3339 text: String) -> Double? {
        let parts = text.split(separator: ".", maxSplits: 1)
        let formatter = ISO8601DateFormatter()
        guard let whole = formatter.date(from: String(parts[0]) + (parts.count == 1 ? "" : "Z")) else { return nil }
        let fraction = parts.count == 2 ? Double("0." + parts[1].prefix { $0.isNumber }) ?? 0 : 0
        return whole.timeIntervalSince1970 + fraction
    }
}
