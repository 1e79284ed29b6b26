import Foundation
import RelayTransport
import TestSupport
import Testing

/// Issue #19 goal 4 at relayd's start, seen from the relay: a device's identity connections
/// do not open together. relayd opened all of them in one pass of its loop, within
/// milliseconds of each other, which tied them to one device; each now opens at a moment of its
/// own within `RelayConnection.Options.identityReconnectJitterMs` (5 s, `ConnectSpread`).
@Suite("Relay: relayd's start is spread", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelaydStartSpreadTests {
    @Test("relayd restarts with 8 identities: each mailbox connection opens at its own moment, spread over more than a second (nats-server's /connz), and delivery goes on")
    func startIsSpread() async throws {
        try await onOwnThread { try self.steps() }
    }

    private func steps() throws {
        guard let peers = try RelayPeers.make(["alice", "bob"], observed: true) else { return }
        defer { peers.tearDown() }
        try peers.diagnosed {
            let (trips, alice) = try MailboxConnectionStarts.eightConversations(peers)

            peers.stopRelayd("alice")
            try waitUntil("alice's mailbox connections are closed", timeout: 30) {
                try MailboxConnectionStarts.starts(peers, of: alice).isEmpty
            }
            _ = try peers.send("bob", trips[0], "while relayd was away")
            try peers.startRelayd("alice")
            try waitUntil("alice's 8 mailbox connections are open", timeout: 60) {
                try MailboxConnectionStarts.starts(peers, of: alice).count == 8
            }
            let spread = MailboxConnectionStarts.spread(try MailboxConnectionStarts.starts(peers, of: alice))
            print("START spread of alice's 8 mailbox connections at relayd's start: \(spread.ms) ms (gaps \(spread.gaps) ms)")
            #expect(spread.ms > 1_000, "all of alice's connections opened within \(spread.ms) ms")
            // What waited in the mailbox is delivered once its connection opens.
            try peers["alice"].waitUntil("alice stored it", timeoutMs: 60_000) {
                try peers.storedTexts("alice", trips[0]).contains("while relayd was away")
            }
        }
    }
}
