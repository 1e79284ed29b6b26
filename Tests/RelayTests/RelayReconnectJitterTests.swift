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
            let (trips, alice) = try MailboxConnectionStarts.eightConversations(peers)

            peers.server.stop()
            try peers.server.restart()
            try waitUntil("alice's 8 mailbox connections are back", timeout: 60) {
                try MailboxConnectionStarts.starts(peers, of: alice).count == 8
            }
            let spread = MailboxConnectionStarts.spread(try MailboxConnectionStarts.starts(peers, of: alice))
            print("RECONNECT spread of alice's 8 mailbox connections after a relay restart: \(spread.ms) ms (gaps \(spread.gaps) ms)")
            #expect(spread.ms > 1_000, "all of alice's connections came back within \(spread.ms) ms")
            // Still delivered after it.
            _ = try peers.send("bob", trips[0], "after the restart")
            try peers["alice"].waitUntil("alice stored it", timeoutMs: 60_000) {
                try peers.storedTexts("alice", trips[0]).contains("after the restart")
            }
        }
    }
}
