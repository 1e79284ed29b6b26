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
            let trips = try (0..<8).map { _ in try peers.conversation(creator: "alice", joiner: "bob") }
            let alice = Set(try trips.map { try peers.mailbox("alice", $0).clientId })
            try waitUntil("alice's relayd watches 8 mailboxes", timeout: 60) {
                try RelayReconnectJitterTests.starts(peers, of: alice).count == 8
            }

            peers.stopRelayd("alice")
            try waitUntil("alice's mailbox connections are closed", timeout: 30) {
                try RelayReconnectJitterTests.starts(peers, of: alice).isEmpty
            }
            _ = try peers.send("bob", trips[0], "while relayd was away")
            try peers.startRelayd("alice")
            try waitUntil("alice's 8 mailbox connections are open", timeout: 60) {
                try RelayReconnectJitterTests.starts(peers, of: alice).count == 8
            }
            let starts = try RelayReconnectJitterTests.starts(peers, of: alice).sorted()
            let spreadMs = Int((starts.last! - starts.first!) * 1_000)
            print("START spread of alice's 8 mailbox connections at relayd's start: \(spreadMs) ms "
                  + "(gaps \(zip(starts, starts.dropFirst()).map { Int(($1 - $0) * 1_000) }) ms)")
            #expect(spreadMs > 1_000, "all of alice's connections opened within \(spreadMs) ms")
            // What waited in the mailbox is delivered once its connection opens.
            try peers["alice"].waitUntil("alice stored it", timeoutMs: 60_000) {
                try peers.storedTexts("alice", trips[0]).contains("while relayd was away")
            }
        }
    }
}
