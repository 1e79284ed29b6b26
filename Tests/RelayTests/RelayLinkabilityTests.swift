import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// Issue #19, docs/adr/0044: what the relay operator sees must not tie two identities of one
/// device together. All real: nats-server with its monitoring port and protocol trace, three
/// devices with their daemons, workers and sotto-relayds. Alice has five conversations (four
/// with bob, one carol created) and an unused inbox; messages go both ways, receipts come
/// back, alice's relayd restarts and one of her conversations explodes. Then, from the
/// relay's own records: every connection's subscriptions and publishes name the mailboxes of
/// one conversation at most (so of one identity per device), no client name is shared by two
/// connections, and no inbox prefix (nor the first 12 characters of nats.c's NUIDs, which it
/// shares across one process's connections) appears on two.
@Suite("Relay linkability", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayLinkabilityTests {
    @Test("no relay connection touches two identities of one device, and no name or inbox prefix links two")
    func nothingLinksTwoIdentities() async throws {
        // Checked on a thread of its own (a long blocking run); what it found is asserted here,
        // where Swift Testing attributes it to this test.
        let findings = try await onOwnThread { () -> Findings? in
            // A short idle time: the daemons' per-conversation connections also close and reopen.
            guard let peers = try RelayPeers.make(["alice", "bob", "carol"], observed: true,
                                                  environment: ["SOTTO_RELAY_IDLE_MS": "2000"]) else { return nil }
            defer { peers.tearDown() }
            return try peers.diagnosed { try self.exercise(peers) }
        }
        guard let findings else { return }
        #expect(findings.deviceConnections > 5, "the trace shows the devices' connections")
        #expect(findings.inboxes > 0, "the devices' inboxes were seen")
        #expect(findings.consumers > 0, "the consumers were seen")
        #expect(findings.retiredOnOwnConnection, "the explode's purge went out on a device connection")
        #expect(findings.unusedInboxes == 3, "each device's unused inbox was checked")
        #expect(findings.problems.isEmpty, "\(findings.problems.count) problems:\n\(findings.problems.joined(separator: "\n"))")
    }

    private struct Findings: Sendable {
        var deviceConnections = 0
        var inboxes = 0
        var consumers = 0
        var retiredOnOwnConnection = false
        var unusedInboxes = 0
        var problems: [String] = []
    }

    private func exercise(_ peers: RelayPeers) throws -> Findings {
        var conversations: [String] = []
        for _ in 0..<4 { conversations.append(try peers.conversation(creator: "alice", joiner: "bob")) }
        conversations.append(try peers.conversation(creator: "carol", joiner: "alice"))
        let partner = { (index: Int) in index < 4 ? "bob" : "carol" }
        // Each conversation's clientIds (every member's mailbox) form one group.
        var groups: [String: String] = [:]
        for (index, conversation) in conversations.enumerated() {
            for device in ["alice", partner(index)] {
                groups[try peers.mailbox(device, conversation).clientId] = conversation
            }
        }

        var sent: [(device: String, message: String)] = []
        for (index, conversation) in conversations.enumerated() {
            sent.append(("alice", try peers.send("alice", conversation, "from alice \(index)")))
            sent.append((partner(index), try peers.send(partner(index), conversation, "to alice \(index)")))
        }
        try waitUntilDelivered(sent, peers)

        // Alice's relayd restarts: every identity's connection is opened again.
        peers.stopRelayd("alice")
        let afterRestart = try peers.send("bob", conversations[1], "while alice's relayd was down")
        try peers.startRelayd("alice")
        try waitUntilDelivered([("bob", afterRestart)], peers)

        // One conversation explodes: alice's relayd retires its mailbox (purge, delete consumer).
        let doomed = try peers.mailbox("alice", conversations[3])
        _ = try peers["alice"].json(["explode", conversations[3]])
        try waitUntil("alice's relayd retired the exploded mailbox", timeout: 60) {
            peers.relaydOutput("alice").contains { $0.contains("identity gone") && $0.contains(doomed.clientId) }
        }
        let last = try peers.send("alice", conversations[0], "after the explode")
        try waitUntilDelivered([("alice", last)], peers)

        // At rest the daemons hold no connection: each sender's closed after its idle time
        // (2 s here), and every open connection is an identity's in a relayd (it watches its mailbox).
        try waitUntil("only relayd's identity connections are open", timeout: 30) {
            try RelayLinkage.openConnections(server: peers.server).filter { !$0.name.hasPrefix("test-") }
                .allSatisfy { $0.subscriptions.contains { $0.hasPrefix(Mailbox.subjectPrefix) } }
        }

        let seen = try RelayLinkage.observe(server: peers.server)
        let devices = seen.connections.values.filter { !$0.name.hasPrefix("test-") }
        var findings = Findings(deviceConnections: devices.count, consumers: seen.consumers.count)

        for connection in devices {
            let touched = seen.groups(of: connection, in: groups)
            if touched.count > 1 {
                findings.problems.append("connection \(connection.cid) touches \(touched.count) conversations: "
                                         + "\(connection.subjects.sorted().prefix(12))")
            }
        }
        // The explode's retirement went out on a device's connection too (its filter names the mailbox).
        findings.retiredOnOwnConnection = devices.contains { connection in
            connection.subjects.contains { $0.contains("PURGE") && $0.contains(Mailbox.streamName) }
                && connection.payloadIds.contains(doomed.clientId)
        }

        var nameOwner: [String: Int] = [:]
        for connection in devices where !connection.name.isEmpty {
            if let owner = nameOwner[connection.name] {
                findings.problems.append("client name \(connection.name) on connections \(owner) and \(connection.cid)")
            }
            nameOwner[connection.name] = connection.cid
        }

        let inboxNames = RelayLinkage.sharedInboxNames(Array(devices))
        findings.inboxes = inboxNames.inboxes
        findings.problems += inboxNames.problems

        // Goal 5: a device's unused inbox is unknown to the relay until the daemon gives it out.
        for name in ["alice", "bob", "carol"] {
            guard let unused = peers.unusedClientId(name) else { continue }
            findings.unusedInboxes += 1
            if seen.consumers.contains(where: { $0.name.contains(unused) || $0.filter.contains(unused) })
                || devices.contains(where: { $0.subjects.contains { $0.contains(unused) } }) {
                findings.problems.append("\(name)'s unused inbox \(unused) is on the relay before it was given out")
            }
        }

        // Every consumer names one mailbox: its own.
        for consumer in seen.consumers where Set(RelayLinkage.clientIds(in: consumer.name + " " + consumer.filter)).count != 1 {
            findings.problems.append("consumer \(consumer.name) filters \(consumer.filter)")
        }
        return findings
    }

    private func waitUntilDelivered(_ sent: [(device: String, message: String)], _ peers: RelayPeers) throws {
        for (device, message) in sent {
            try peers[device].waitUntil("\(message) delivered", timeoutMs: 60_000) {
                try peers.outboxStates(device, messageId: message).map(\.state) == ["delivered"]
            }
        }
    }
}
