import Foundation
import RelayTransport
import TestSupport
import Testing

/// Issue #19's own check, from the relay operator's side: one device with 25 conversations
/// (20 awake, the rest asleep, one created and one exploded while the relay watches) and two
/// other devices, on an operator-mode relay (docs/adr/0051), over sends both ways, sleeps,
/// wakes and restarts of relayd and the daemon. Everything the relay ever showed counts: its
/// protocol trace (every SUB and PUB of every connection, short ones too) and its monitoring
/// read every 200 ms (users, names, subscriptions, consumer settings), not only the end state.
@Suite("Relay: one device's 25 conversations", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayDeviceLinkabilityTests {
    @Test("alice with 25 conversations, some asleep, one created and one exploded while watched, and two other devices: no relay connection ever touches two of one device's identities, and no client name, relay user, inbox prefix or consumer setting is shared by two identities")
    func twentyFiveConversations() async throws {
        let findings = try await onOwnThread { () -> Findings? in
            guard let peers = try RelayPeers.make(["alice", "bob", "carol"], observed: true, operatorMode: true,
                                                  environment: ["SOTTO_RELAY_IDLE_MS": "2000"],
                                                  relaydArguments: ["--sleeping-drain-ms", "3000"]) else { return nil }
            defer { peers.tearDown() }
            let sampler = try RelayMonitorSampler.start(server: peers.server)
            defer { _ = sampler.stop() }
            return try peers.diagnosed {
                let story = try Self.exercise(peers)
                return try Self.inspect(story, monitored: sampler.stop(), peers)
            }
        }
        guard let findings else { return }
        #expect(findings.monitorReads > 10, "the relay's monitoring was read through the run")
        #expect(findings.aliceIdentitiesSeen == 25, "all 25 of alice's identities (one exploded) were seen on the relay")
        #expect(findings.asleep >= 4, "some of alice's inboxes slept")
        #expect(findings.sleepingDrainConnections >= 4, "sleeping mailboxes were drained on short connections")
        #expect(findings.explodedConsumerSeen && findings.explodedConsumerGone, "the exploded identity's consumer came and went")
        #expect(findings.consumers == 50, "every identity's consumer was seen (25 conversations, two members each)")
        #expect(findings.usersSeen >= 50, "every identity logged in as a user of its own")
        #expect(findings.problems.isEmpty, "\(findings.problems.count) problems:\n\(findings.problems.prefix(40).joined(separator: "\n"))")
    }

    private struct Findings: Sendable {
        var monitorReads = 0
        var aliceIdentitiesSeen = 0
        var asleep = 0
        var sleepingDrainConnections = 0
        var explodedConsumerSeen = false
        var explodedConsumerGone = false
        var consumers = 0
        var usersSeen = 0
        var problems: [String] = []
    }

    /// What the scenario made: every identity by clientId with its device and conversation, and
    /// its relay user's key.
    private struct Story {
        var device: [String: String] = [:]
        var conversation: [String: String] = [:]
        var userKey: [String: String] = [:]  // relay user's public key -> clientId
        var asleep: Set<String> = []
        var exploded = ""
        var unused: [String: String] = [:]
    }

    // MARK: - The scenario

    private static func exercise(_ peers: RelayPeers) throws -> Story {
        let partners = ["bob", "carol"]
        // 24 conversations alice creates, six at a time; invites revoked so none is kept awake.
        let created = try inParallel(count: 24, width: 6) { index in
            try peers.conversation(creator: "alice", joiner: partners[index % 2], revokeInvites: true)
        }
        var story = Story()
        func remember(_ conversation: String, _ members: [String]) throws {
            for name in members {
                let clientId = try peers.mailbox(name, conversation).clientId
                story.device[clientId] = name
                story.conversation[clientId] = conversation
                story.userKey[try peers.relayUser(name, clientId: clientId).publicKey] = clientId
            }
        }
        for (index, conversation) in created.enumerated() { try remember(conversation, ["alice", partners[index % 2]]) }
        let alice = { (conversation: String) in try peers.mailbox("alice", conversation).clientId }

        // 20 awake (the daemon's capacity), 4 asleep: relayd watches exactly the awake ones.
        try waitUntilWatchedAreAwake(peers, count: 20)
        let asleep = try created.filter { !Self.marks(peers).contains(try alice($0)) }
        story.asleep = Set(try asleep.map(alice))

        // bob and carol write in every conversation, the sleeping ones too.
        for (index, conversation) in created.enumerated() {
            try peers.send(partners[index % 2], conversation, "to alice \(index)")
        }
        for (index, conversation) in created.enumerated() {
            try peers["alice"].waitUntil("alice stored 'to alice \(index)'", timeoutMs: 60_000) {
                try peers.storedTexts("alice", conversation).contains("to alice \(index)")
            }
        }

        // alice writes in the sleeping ones: they wake, four others fall asleep.
        for conversation in asleep { try peers.send("alice", conversation, "awake again") }
        try waitUntilWatchedAreAwake(peers, count: 20)
        story.asleep.formUnion(try created.map(alice).filter { !Self.marks(peers).contains($0) })

        // Restarts: alice's relayd (a push waits for it), then her daemon.
        peers.stopRelayd("alice")
        try peers.send("bob", created[0], "while alice's relayd was away")
        try peers.startRelayd("alice")
        peers["alice"].stopDaemon()
        try peers["alice"].startDaemon()
        try peers["alice"].waitUntil("alice stored the push sent while her relayd was away", timeoutMs: 60_000) {
            try peers.storedTexts("alice", created[0]).contains("while alice's relayd was away")
        }

        // The 25th: carol's conversation, which alice joins; and one of alice's explodes.
        let joined = try peers.conversation(creator: "carol", joiner: "alice", revokeInvites: true)
        try remember(joined, ["carol", "alice"])
        story.exploded = try alice(created[3])
        _ = try peers["alice"].json(["explode", created[3]])
        try waitUntil("alice's relayd retired the exploded mailbox", timeout: 60) {
            peers.relaydOutput("alice").contains { $0.contains("identity gone") && $0.contains(story.exploded) }
        }
        let last = [("alice", try peers.send("alice", created[0], "after the explode")),
                    ("alice", try peers.send("alice", joined, "in the 25th")),
                    ("carol", try peers.send("carol", joined, "to alice in the 25th"))]
        for (name, message) in last {
            try peers[name].waitUntil("\(message) delivered", timeoutMs: 60_000) {
                try peers.outboxStates(name, messageId: message).map(\.state) == ["delivered"]
            }
        }
        try waitUntilWatchedAreAwake(peers, count: 20)
        for name in ["alice", "bob", "carol"] { story.unused[name] = peers.unusedClientId(name) }
        return story
    }

    private static func marks(_ peers: RelayPeers) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: peers["alice"].group.awakeMailboxesPath)) ?? [])
    }

    /// Until alice's daemon marks `count` inboxes awake and her relayd watches exactly their mailboxes.
    private static func waitUntilWatchedAreAwake(_ peers: RelayPeers, count: Int) throws {
        var last = ""
        do {
            try waitUntil("alice marks \(count) inboxes awake and her relayd watches exactly those", timeout: 90) {
                let awake = marks(peers)
                let alice = Set(try peers["alice"].query("SELECT clientId FROM conversation").compactMap { try $0.optionalString(0) })
                let watched = Set(try RelayLinkage.openConnections(server: peers.server)
                    .flatMap { $0.subscriptions.compactMap { Mailbox(subject: $0)?.clientId } }).intersection(alice)
                last = "\(awake.count) marked of \(alice.count), \(watched.count) watched, "
                    + "\(awake.subtracting(watched).count) marked not watched, \(watched.subtracting(awake).count) watched not marked, "
                    + "\(awake.subtracting(alice).count) marks of no conversation"
                return awake.count == count && awake.isSubset(of: alice) && watched == awake
            }
        } catch {
            throw RelayRigFailure("\(error): \(last)")
        }
    }

    // MARK: - What the relay saw

    private static func inspect(_ story: Story, monitored: RelayMonitorSampler.Seen, _ peers: RelayPeers) throws -> Findings {
        var findings = Findings(monitorReads: monitored.samples)
        findings.problems += monitored.failures.prefix(3).map { "monitoring: \($0)" }
        let trace = try RelayLinkage.observe(server: peers.server)
        let signer = try RelaySigningKey.load(path: peers.operatorSetup!.signingKeyPath).publicKey

        /// The identities a connection touched: clientIds in its subjects and payloads, and
        /// identities named by their relay user's key (consumer subjects, the user it logged in as).
        func identities(_ cid: Int) -> Set<String> {
            let traced = trace.connections[cid]
            let monitoredConnection = monitored.connections[cid]
            let texts = (traced.map { Array($0.subjects) } ?? []) + Array(monitoredConnection?.subscriptions ?? [])
            var keys = texts.flatMap(RelayLinkage.userKeys) + Array(traced?.payloadKeys ?? [])
            keys += Array(monitoredConnection?.users ?? [])
            let ids = texts.flatMap(RelayLinkage.clientIds) + Array(traced?.payloadIds ?? [])
            return Set(ids + keys.compactMap { story.userKey[$0] })
        }

        let cids = Set(trace.connections.keys).union(monitored.connections.keys)
        let deviceCids = cids.filter { !(monitored.connections[$0]?.name ?? trace.connections[$0]?.name ?? "").hasPrefix("test-") }
        var aliceSeen: Set<String> = []
        // What could tie connections together: the user each logged in as, its inbox prefix
        // (in operator mode `_INBOX.<user>`), the NUID part of its inboxes, its client name.
        // Connections that carry the same one may serve one identity (its held connection,
        // its drains, its reconnects), never two of one device, nor two conversations.
        var carriers: [String: Set<String>] = [:]
        func spans(_ touched: Set<String>) -> String? {
            for name in ["alice", "bob", "carol"] {
                let own = touched.filter { story.device[$0] == name }
                if own.count > 1 { return "\(own.count) of \(name)'s identities" }
            }
            let conversations = Set(touched.map { story.conversation[$0] ?? "unknown " + $0 })
            return conversations.count > 1 ? "\(conversations.count) conversations" : nil
        }
        for cid in deviceCids.sorted() {
            let touched = identities(cid)
            aliceSeen.formUnion(touched.filter { story.device[$0] == "alice" })
            if let span = spans(touched) { findings.problems.append("connection \(cid) touches \(span)") }
            let seen = monitored.connections[cid]
            if !touched.intersection(story.asleep).isEmpty, !(seen?.subscriptions ?? []).contains(where: { $0.hasPrefix(Mailbox.wakePrefix) }) {
                findings.sleepingDrainConnections += 1
            }
            // The operator's own admin (the streams' set-up) touches no mailbox and is not a device's.
            for issuer in seen?.issuers ?? [] where issuer != signer && !touched.isEmpty {
                findings.problems.append("connection \(cid) logged in as a user issued by \(issuer)")
            }
            var tokens = (seen?.users ?? []).map { "relay user \($0)" }
            if let name = seen?.name, !name.isEmpty { tokens.append("client name \(name)") }
            for inbox in trace.connections[cid]?.inboxes ?? [] {
                tokens.append("inbox prefix \(RelayLinkage.inboxPrefix(inbox))")
                if let nuid = RelayLinkage.nuidPrefix(inbox) { tokens.append("NUID prefix \(nuid)") }
            }
            for token in tokens { carriers[token, default: []].formUnion(touched) }
        }
        findings.aliceIdentitiesSeen = aliceSeen.count
        findings.usersSeen = carriers.filter { $0.key.hasPrefix("relay user ") && !$0.value.isEmpty }.count
        for (token, touched) in carriers.sorted(by: { $0.key < $1.key }) {
            if let span = spans(touched) { findings.problems.append("\(token) is shared by connections of \(span)") }
        }

        // Consumers: each names one mailbox, is named by that identity's own user, and has
        // the same settings as every other consumer of every device.
        findings.consumers = monitored.consumers.count
        var settings: [[String: String]: [String]] = [:]
        for (name, consumer) in monitored.consumers {
            let ids = Set(RelayLinkage.clientIds(in: consumer.filter))
            if ids.count != 1 || story.userKey[name] != ids.first {
                findings.problems.append("consumer \(name) filters \(consumer.filter)")
            }
            settings[consumer.settings, default: []].append(story.device[ids.first ?? ""] ?? "?")
        }
        if settings.count > 1 {
            findings.problems.append("consumer settings differ: \(settings.map { "\(Set($0.value).sorted()): \($0.key)" })")
        }
        let explodedConsumer = story.userKey.first { $0.value == story.exploded }?.key ?? "?"
        findings.explodedConsumerSeen = monitored.consumers[explodedConsumer] != nil
        findings.explodedConsumerGone = !trace.consumers.contains { $0.name == explodedConsumer }

        // Each device's unused inbox is unknown to the relay until it is given out.
        for (name, unused) in story.unused where deviceCids.contains(where: { identities($0).contains(unused) })
            || monitored.consumers.values.contains(where: { $0.filter.contains(unused) }) {
            findings.problems.append("\(name)'s unused inbox \(unused) is on the relay before it was given out")
        }
        findings.asleep = story.asleep.count
        return findings
    }
}

/// Runs `body` for 0..<count on `width` threads at once; the results in index order.
private func inParallel<T: Sendable>(count: Int, width: Int, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
    let work = ParallelWork<T>(count: count)
    let done = DispatchGroup()
    for _ in 0..<min(width, count) {
        done.enter()
        Thread {
            while let index = work.take() { work.put(index, Result { try body(index) }) }
            done.leave()
        }.start()
    }
    done.wait()
    return try work.results.map { try $0!.get() }
}

/// The indexes still to run and the results so far, shared by `inParallel`'s threads.
private final class ParallelWork<T>: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var results: [Result<T, Error>?]
    private var next = 0

    init(count: Int) { results = Array(repeating: nil, count: count) }

    func take() -> Int? {
        lock.withLock {
            guard next < results.count else { return nil }
            next += 1
            return next - 1
        }
    }

    func put(_ index: Int, _ result: Result<T, Error>) { lock.withLock { results[index] = result } }
}
