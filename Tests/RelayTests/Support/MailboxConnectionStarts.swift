import Foundation
import RelayTransport
import TestSupport

/// When a device's mailbox connections started, read from the relay's own monitoring
/// (`/connz`): what the tests of issue #19 goal 4 (`RelayReconnectJitterTests`,
/// `RelaydStartSpreadTests`) look at.
///
/// ```swift
/// let (trips, alice) = try MailboxConnectionStarts.eightConversations(peers)
/// let spread = MailboxConnectionStarts.spread(try MailboxConnectionStarts.starts(peers, of: alice))
/// ```
enum MailboxConnectionStarts {
    /// alice makes 8 conversations with bob and waits until her relayd watches all 8 mailboxes.
    static func eightConversations(_ peers: RelayPeers) throws -> (trips: [String], alice: Set<String>) {
        let trips = try (0..<8).map { _ in try peers.conversation(creator: "alice", joiner: "bob") }
        let alice = Set(try trips.map { try peers.mailbox("alice", $0).clientId })
        try waitUntil("alice's relayd watches 8 mailboxes", timeout: 60) { try starts(peers, of: alice).count == 8 }
        return (trips, alice)
    }

    /// How far apart the first and the last start are, and the gaps between them (ms).
    static func spread(_ starts: [Double]) -> (ms: Int, gaps: [Int]) {
        let sorted = starts.sorted()
        guard let first = sorted.first, let last = sorted.last else { return (0, []) }
        return (Int((last - first) * 1_000), zip(sorted, sorted.dropFirst()).map { Int(($1 - $0) * 1_000) })
    }

    /// When each connection watching one of `clientIds`' mailboxes started (seconds, /connz).
    static func starts(_ peers: RelayPeers, of clientIds: Set<String>) throws -> [Double] {
        guard let port = peers.server.monitorPort else { throw RelayRigFailure("no monitoring port") }
        let connz = try NatsMonitor(port: port).json("/connz?subs=1&limit=100000")
        return (connz["connections"] as? [[String: Any]] ?? []).compactMap { connection in
            let watched = (connection["subscriptions_list"] as? [String] ?? []).compactMap { Mailbox(subject: $0)?.clientId }
            guard watched.contains(where: clientIds.contains), let start = connection["start"] as? String else { return nil }
            return seconds(rfc3339: start)
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
