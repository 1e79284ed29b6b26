import Foundation
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #10, "Crash atomicity": alice's daemon SIGKILLs itself at a named step
/// (`SOTTO_CRASH_AT`, ADR 0017) of an explode, a join acceptance, a send, a leave or a removal, or
/// is SIGKILLed at a random moment of one; then it restarts. Each operation must be all or nothing
/// across alice's database and keystore, and what it owes bob (the explosion, the
/// membership, the message) must reach bob exactly once.
///
/// ```swift
/// let report = try CrashAtomicity(profile: .short, operation: .explode).run()
/// print(report.summaryLine)   // STRESS crash-atomicity explode: rounds=… findings=0 …
/// ```
struct CrashAtomicity {
    enum Operation: String, Sendable {
        case explode, join, send, leave, remove
        /// `sotto explode --in`: the schedule's commit, then the timer's deletion (CrashAtomicity+ScheduledExplode).
        case scheduledExplode
    }

    let profile: StressProfile
    let operation: Operation
    /// Issue #21: alice's group directory lies on the power-cut file system (docs/adr/0037),
    /// and every death is also a power cut of this kind before the restart.
    var powerCut: PowerCutFileSystem.Cut? = nil
    /// Issue #21, each named step with a cut of its own (`PowerCutRound.plan`), instead of
    /// `points` `repeats` times with `powerCut`; alice's group directory lies on the power-cut
    /// file system. Random kills still cut with `powerCut` (none when it is nil).
    var plan: [PowerCutRound<String>]? = nil

    /// Named steps, in the order an operation passes them.
    static let explodePoints = ["send.composed", "explode.committed", "explode.delivered", "explode.rowsCommitted",
                                "keystore.identityWiped", "explode.keysWiped"]
    static let joinPoints = ["join.decided", "join.committed", "outbox.delivered"]
    static let sendPoints = ["send.composed", "send.committed", "outbox.delivered"]
    /// A leave commits its message and the conversation's end, then deletes as explode does.
    static let leavePoints = ["send.composed", "leave.committed", "explode.rowsCommitted", "keystore.identityWiped",
                              "explode.keysWiped"]
    static let removePoints = ["send.composed", "send.committed", "outbox.delivered"]

    /// The named steps a run visits: every one under the full profile (three times), the ones
    /// between two commits and around a delivery in the short one.
    var points: [String] {
        let full = profile.name == "full"
        switch operation {
        case .explode: return Self.explodePoints
        case .join: return full ? Self.joinPoints : ["join.decided", "join.committed"]
        case .send: return full ? Self.sendPoints : ["send.committed", "outbox.delivered"]
        case .leave: return Self.leavePoints
        case .remove: return Self.removePoints
        case .scheduledExplode: return full ? Self.scheduledExplodePoints : ["send.composed", "explode.committed", "explode.rowsCommitted"]
        }
    }

    var repeats: Int { profile.name == "full" ? 3 : 1 }
    /// Not for a scheduled explode: its random moments are an immediate explode's, hours apart.
    var randomKills: Int { operation == .scheduledExplode ? 0 : profile.name == "full" ? 20 : 1 }

    struct Report: Sendable {
        var rounds = 0
        var namedKills = 0
        var randomKills = 0
        /// Random kills that landed after the operation's commit (the rest: before it).
        var randomAfterCommit = 0
        /// Rounds whose armed step was never reached (the daemon did not die there).
        var notReached: [String] = []
        /// What broke all-or-nothing or exactly-once, one line per finding.
        var findings: [String] = []
        /// Each power cut's summary (what the disk forgot).
        var powerCuts: [String] = []
        var seconds = 0.0

        var operation = ""

        var summaryLine: String {
            "STRESS crash-atomicity \(operation): rounds=\(rounds) named=\(namedKills) random=\(randomKills) randomAfterCommit=\(randomAfterCommit) "
                + "notReached=\(notReached.count) findings=\(findings.count) seconds=\(String(format: "%.1f", seconds))"
        }
    }

    /// How alice's device holds one conversation's inbox after a crash and restart.
    enum Holding: Equatable, CustomStringConvertible {
        case whole          // rows, identity file and alias; no tombstone
        case gone           // none of them
        case partial(String)

        var description: String {
            switch self {
            case .whole: return "whole"
            case .gone: return "gone"
            case .partial(let what): return "partial(\(what))"
            }
        }
    }

    func run() throws -> Report {
        var report = Report(operation: operation.rawValue)
        let started = Date()
        let tmp = try TemporaryDirectory(prefix: "sotto-atomic")
        // A short delivery budget: an explosion's deletion is held back at most this long.
        let budget = ["SOTTO_EXPLODE_DELIVERY_MS": "3000"]
        let power = powerCut != nil || plan != nil ? try PowerCutFileSystem.mount(in: tmp.path) : nil
        defer { power?.abandon() }
        let alice = try Device.start("alice", in: tmp.path, environment: budget, groupIn: power?.mountpoint)
        defer { alice.stop() }
        try power?.syncEverything()  // the device was set up long ago
        let bob = try Device.start("bob", in: tmp.path, environment: budget)
        defer { bob.stop() }

        for (point, cut) in namedRounds {
            var round = self
            round.powerCut = cut
            switch operation {
            case .explode: try round.explodeRound(alice: alice, bob: bob, crash: .named(point), power: power, report: &report)
            case .join: try round.joinRound(alice: alice, bob: bob, crash: .named(point), power: power, report: &report)
            case .send: try round.sendRound(alice: alice, bob: bob, crash: .named(point), power: power, report: &report)
            case .leave: try round.leaveRound(alice: alice, bob: bob, crash: .named(point), power: power, report: &report)
            case .remove: try round.removeRound(alice: alice, bob: bob, crash: .named(point), power: power, report: &report)
            case .scheduledExplode: try round.scheduledExplodeRound(alice: alice, bob: bob, point: point, power: power, report: &report)
            }
        }
        for round in 0..<randomKills {
            switch operation {
            case .join:
                // Spread over the join's run from bob's call (≈ 50–400 ms under load): before alice
                // decides, between, after.
                try joinRound(alice: alice, bob: bob, crash: .afterMs(10 + (round * 53) % 500), power: power, report: &report)
            case .explode:
                // Spread over the explode's run (≈ 0.1–1 s under load): before its commit, between, after.
                try explodeRound(alice: alice, bob: bob, crash: .afterMs(40 + (round * 173) % 1_200), power: power,
                                 report: &report)
            case .send:
                // Spread over the send's run from the CLI's start (≈ 30–300 ms under load): the
                // CLI starting, composed, committed, the push on its way to bob. The first (the
                // short profile's one) lands mid-way.
                try sendRound(alice: alice, bob: bob, crash: .afterMs(sendSpreadMs(round)), power: power, report: &report)
            case .leave:
                // A leave runs as an explode does (commit, delivery wait, deletion): the same spread
                // on even rounds; odd rounds the send's early one, before the commit.
                let delay = round % 2 == 0 ? 40 + (round * 173) % 1_200 : sendSpreadMs(round)
                try leaveRound(alice: alice, bob: bob, crash: .afterMs(delay), power: power, report: &report)
            case .remove:
                // A removal is a send with a membership change: the send's spread.
                try removeRound(alice: alice, bob: bob, crash: .afterMs(sendSpreadMs(round)), power: power, report: &report)
            case .scheduledExplode:
                break
            }
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// The named steps in the order they are visited, each with its cut: `plan`, or `points`
    /// `repeats` times with `powerCut`.
    private var namedRounds: [(point: String, cut: PowerCutFileSystem.Cut?)] {
        if let plan { return plan.map { ($0.step, $0.cut) } }
        return (0..<repeats).flatMap { _ in points.map { ($0, powerCut) } }
    }

    /// The random kill's moment in a send's (or a removal's) run, from the CLI's launch: even
    /// rounds 10–409 ms (70 ms first: the short profile's one round), odd rounds 5–79 ms, where
    /// the CLI is still starting, connecting or waiting for the commit. With 10–409 ms alone,
    /// 1 send of 20 and 2 removals of 20 were killed before their commit.
    private func sendSpreadMs(_ round: Int) -> Int {
        round % 2 == 0 ? 10 + (60 + round * 37) % 400 : 5 + (round / 2 * 13) % 75
    }

    enum Crash {
        case named(String)
        case afterMs(Int)
    }

    // MARK: - Explode

    /// With a power cut: the power goes the moment alice's daemon died, so her workers stop too,
    /// and her disk comes back with what was fsynced.
    func cutPower(_ alice: Device, _ power: PowerCutFileSystem?, _ report: inout Report) throws {
        guard let power, let powerCut else { return }
        let summary = try power.powerCycle(powerCut) {
            alice.stopPushSocket()
            alice.stopDaemon(signal: SIGKILL)
        }
        report.powerCuts.append("\(powerCut): \(summary)")
        try alice.startPushSocket()
    }

    private func explodeRound(alice: Device, bob: Device, crash: Crash, power: PowerCutFileSystem?,
                              report: inout Report) throws {
        report.rounds += 1
        let trip = try DaemonCrash.conversation(creator: alice, joiner: bob)
        let ids = try Ids(alice: alice, bob: bob, conversationId: trip)
        let label: String
        var reported = false
        switch crash {
        case .named(let point):
            label = "explode@\(point)"
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: point])
            _ = try alice.cli(["explode", trip, "--json"])
            guard try waitForDeath(alice, label, &report) else { return }
            report.namedKills += 1
        case .afterMs(let delay):
            label = "explode@random+\(delay)ms"
            reported = killed(alice, afterMs: delay, report: &report) { try alice.cli(["explode", trip, "--json"]).status == 0 }
        }
        try cutPower(alice, power, &report)

        // The daemon is dead; workers still answer pushes. Where the rows are gone, the
        // identity must already be refused (never decrypted).
        let before = try holding(alice, ids)
        try checkPush(alice, ids, holding: before, label: "\(label) before restart", report: &report)

        try alice.startDaemon()
        let committed = try explodeCommitted(alice, ids)
        // Committed: the restart finishes it (rows, keys, bob told). Not: nothing happened.
        let expected: Holding = committed ? .gone : .whole
        if case .afterMs = crash, committed { report.randomAfterCommit += 1 }
        if reported && !committed { report.findings.append("\(label): the CLI reported the explode, alice's disk does not hold it") }
        let settled = (try? alice.waitUntil("\(label): alice settles", timeoutMs: 20_000) {
            try holding(alice, ids) == expected
        }) != nil
        let after = try holding(alice, ids)
        if !settled { report.findings.append("\(label): alice \(after) after restart, expected \(expected) (before: \(before))") }
        try checkPush(alice, ids, holding: after, label: "\(label) after restart", report: &report)
        let leftovers = try keystoreLeftovers(alice)
        if !leftovers.isEmpty { report.findings.append("\(label): keystore leftovers \(leftovers)") }
        if committed {
            let bobDeleted = (try? bob.waitUntil("\(label): bob deletes", timeoutMs: 20_000) {
                try bob.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) == 0
            }) != nil
            if !bobDeleted { report.findings.append("\(label): bob still has the exploded conversation") }
        } else {
            let bobKeeps = try bob.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) == 1
            if !bobKeeps { report.findings.append("\(label): nothing committed on alice, yet bob lost the conversation") }
        }
    }

    /// Whether alice's explode reached its commit: the conversation has an explosion time,
    /// or is already (partly) deleted.
    func explodeCommitted(_ alice: Device, _ ids: Ids) throws -> Bool {
        let rows = try alice.query("SELECT expiresAt FROM conversation WHERE id = ?", [.text(ids.conversationId)])
        guard let row = rows.first else { return true }
        return try row.optionalInt64(0) != nil
    }

    // MARK: - Join acceptance

    private func joinRound(alice: Device, bob: Device, crash: Crash, power: PowerCutFileSystem?,
                           report: inout Report) throws {
        report.rounds += 1
        guard let trip = try alice.json(["new", "--name", "Join"])["conversationId"] as? String,
              let code = try alice.json(["invite", trip, "--expires", "1h"])["code"] as? String else {
            throw StressFailure("new/invite returned no id or code")
        }
        let label: String
        switch crash {
        case .named(let point):
            label = "join@\(point)"
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: point])
            _ = try bob.json(["join", code, "--profile-name", "bob"])
            guard try waitForDeath(alice, label, &report) else { return }
            report.namedKills += 1
        case .afterMs(let delay):
            // From bob's join call: his request on its way, on alice's disk, decided, committed,
            // her membership push on its way; the kill lands somewhere in there.
            label = "join@random+\(delay)ms"
            _ = killed(alice, afterMs: delay, report: &report) { try bob.cli(["join", code, "--profile-name", "bob", "--json"]).status == 0 }
            let decided = try alice.query("SELECT count(*) FROM join_request WHERE conversationId = ? AND state = 'accepted'",
                                          [.text(trip)])[0].int64(0) == 1
            if decided { report.randomAfterCommit += 1 }
        }
        try cutPower(alice, power, &report)
        try alice.startDaemon()

        // After the restart bob is a member on both sides, told exactly once.
        let active = (try? bob.waitUntil("\(label): bob active", timeoutMs: 20_000) {
            try bob.conversation(trip)?["state"] as? String == "active"
        }) != nil
        if !active { report.findings.append("\(label): bob never became active") }
        _ = try? alice.waitUntil("\(label): alice's outbox drained", timeoutMs: 10_000) {
            try alice.query("SELECT count(*) FROM outbox WHERE state NOT IN ('sent', 'delivered')")[0].int64(0) == 0
        }
        let members = try alice.query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0)
        let accepted = try alice.query("SELECT count(*) FROM join_request WHERE conversationId = ? AND state = 'accepted'",
                                       [.text(trip)])[0].int64(0)
        let memberships = try alice.query("""
            SELECT count(*) FROM message m JOIN outbox o ON o.messageId = m.id
            WHERE m.conversationId = ? AND m.contentType = ? AND m.isOutgoing = 1
            """, [.text(trip), .text(ContentType.membership)])[0].int64(0)
        let bobMemberships = try bob.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                                           [.text(trip), .text(ContentType.membership)])[0].int64(0)
        if members != 2 || accepted != 1 || memberships != 1 || bobMemberships != 1 {
            report.findings.append("\(label): members=\(members) accepted=\(accepted) membershipPushes=\(memberships) "
                                   + "bobMemberships=\(bobMemberships)")
        }
    }

    // MARK: - Send

    /// Alice sends bob a text. Stored (with its push), bob gets it once; not stored, neither
    /// has it. A send the CLI reported done must be stored.
    private func sendRound(alice: Device, bob: Device, crash: Crash, power: PowerCutFileSystem?,
                           report: inout Report) throws {
        report.rounds += 1
        let trip = try DaemonCrash.conversation(creator: alice, joiner: bob)
        let text = "atomic-" + Hex.encode(SecureRandom.bytes(6))
        let label: String
        let expectStored: Bool?
        var reported = false
        switch crash {
        case .named(let point):
            label = "send@\(point)"
            expectStored = point != "send.composed"
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: point])
            _ = try alice.cli(["send", trip, text, "--json"])
            guard try waitForDeath(alice, label, &report) else { return }
            report.namedKills += 1
        case .afterMs(let delay):
            label = "send@random+\(delay)ms"
            expectStored = nil
            reported = killed(alice, afterMs: delay, report: &report) { try alice.cli(["send", trip, text, "--json"]).status == 0 }
        }
        try cutPower(alice, power, &report)
        try alice.startDaemon()

        // A second text after the restart: once bob has it, bob has everything alice will deliver.
        let sentinel = text + "-after"
        _ = try alice.json(["send", trip, sentinel])
        let ids = { (device: Device, text: String) throws -> [String] in
            try device.storedTexts(conversation: trip).filter { $0.text == text }.map(\.id)
        }
        let arrived = (try? bob.waitUntil("\(label): bob has the text sent after the restart", timeoutMs: 20_000) {
            try ids(bob, sentinel).count == 1
        }) != nil
        _ = try? alice.waitUntil("\(label): alice's outbox drained", timeoutMs: 10_000) {
            try alice.query("SELECT count(*) FROM outbox WHERE state NOT IN ('sent', 'delivered')")[0].int64(0) == 0
        }
        let aliceIds = try ids(alice, text)
        let onAlice = Int64(aliceIds.count)
        let pushes = try aliceIds.reduce(Int64(0)) { sum, id in
            sum + (try alice.query("SELECT count(*) FROM outbox WHERE messageId = ?", [.text(id)])[0].int64(0))
        }
        let onBob = Int64(try ids(bob, text).count)
        if case .afterMs = crash, onAlice == 1 { report.randomAfterCommit += 1 }
        let storedAsExpected = expectStored.map { onAlice == ($0 ? 1 : 0) } ?? (onAlice <= 1)
        if !arrived || !storedAsExpected || pushes != onAlice || onBob != onAlice {
            report.findings.append("\(label): arrived=\(arrived) alice=\(onAlice) pushes=\(pushes) bob=\(onBob)")
        }
        if reported && onAlice != 1 { report.findings.append("\(label): the CLI reported the send, alice holds it \(onAlice) times") }
    }

    // MARK: - Leave and remove

    /// Alice, a member of bob's conversation, leaves. Committed (the leave's message and its
    /// end time), the restart finishes it: alice holds nothing, bob drops her once. Not
    /// committed: both keep it whole. A leave the CLI reported done must be committed.
    private func leaveRound(alice: Device, bob: Device, crash: Crash, power: PowerCutFileSystem?,
                            report: inout Report) throws {
        report.rounds += 1
        let trip = try DaemonCrash.conversation(creator: bob, joiner: alice)
        let ids = try Ids(alice: alice, bob: bob, conversationId: trip)
        let label: String
        var reported = false
        switch crash {
        case .named(let point):
            label = "leave@\(point)"
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: point])
            _ = try alice.cli(["leave", trip, "--json"])
            guard try waitForDeath(alice, label, &report) else { return }
            report.namedKills += 1
        case .afterMs(let delay):
            label = "leave@random+\(delay)ms"
            reported = killed(alice, afterMs: delay, report: &report) { try alice.cli(["leave", trip, "--json"]).status == 0 }
        }
        try cutPower(alice, power, &report)
        try checkPush(alice, ids, holding: try holding(alice, ids), label: "\(label) before restart", report: &report)

        try alice.startDaemon()
        let committed = try explodeCommitted(alice, ids)
        if case .afterMs = crash, committed { report.randomAfterCommit += 1 }
        if reported && !committed { report.findings.append("\(label): the CLI reported the leave, alice's disk does not hold it") }
        let expected: Holding = committed ? .gone : .whole
        let settled = (try? alice.waitUntil("\(label): alice settles", timeoutMs: 20_000) { try holding(alice, ids) == expected }) != nil
        let after = try holding(alice, ids)
        if !settled { report.findings.append("\(label): alice \(after) after restart, expected \(expected)") }
        try checkPush(alice, ids, holding: after, label: "\(label) after restart", report: &report)
        let leftovers = try keystoreLeftovers(alice)
        if !leftovers.isEmpty { report.findings.append("\(label): keystore leftovers \(leftovers)") }
        let bobMembers = { try bob.query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0) }
        if committed {
            let dropped = (try? bob.waitUntil("\(label): bob drops alice", timeoutMs: 20_000) { try bobMembers() == 1 }) != nil
            if !dropped { report.findings.append("\(label): bob still lists alice after her leave committed") }
            let leaves = try bob.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ?",
                                       [.text(trip), .text(ContentType.leave)])[0].int64(0)
            if leaves > 1 { report.findings.append("\(label): bob stored alice's leave \(leaves) times") }
        } else if try bobMembers() != 2 {
            report.findings.append("\(label): nothing committed on alice, yet bob lists \(try bobMembers()) members")
        }
    }

    /// Alice, the creator, removes bob. Committed: alice lists only herself and bob deletes
    /// the conversation, told once. Not committed: both keep two members. A removal the CLI
    /// reported done must be committed.
    private func removeRound(alice: Device, bob: Device, crash: Crash, power: PowerCutFileSystem?,
                             report: inout Report) throws {
        report.rounds += 1
        let trip = try DaemonCrash.conversation(creator: alice, joiner: bob)
        let bobInbox = try bob.query("SELECT inboxId FROM conversation WHERE id = ?", [.text(trip)])[0].string(0)
        let label: String
        var reported = false
        switch crash {
        case .named(let point):
            label = "remove@\(point)"
            alice.stopDaemon()
            try alice.startDaemon(environment: [CrashPoint.variable: point])
            _ = try alice.cli(["remove", trip, bobInbox, "--json"])
            guard try waitForDeath(alice, label, &report) else { return }
            report.namedKills += 1
        case .afterMs(let delay):
            label = "remove@random+\(delay)ms"
            reported = killed(alice, afterMs: delay, report: &report) { try alice.cli(["remove", trip, bobInbox, "--json"]).status == 0 }
        }
        try cutPower(alice, power, &report)
        try alice.startDaemon()

        let aliceMembers = try alice.query("SELECT count(*) FROM member WHERE conversationId = ?", [.text(trip)])[0].int64(0)
        let removals = try alice.query("SELECT count(*) FROM message WHERE conversationId = ? AND contentType = ? AND isOutgoing = 1",
                                       [.text(trip), .text(ContentType.remove)])[0].int64(0)
        let committed = removals == 1
        if case .afterMs = crash, committed { report.randomAfterCommit += 1 }
        if reported && !committed { report.findings.append("\(label): the CLI reported the removal, alice's disk does not hold it") }
        if removals > 1 || aliceMembers != (committed ? 1 : 2) {
            report.findings.append("\(label): alice has \(aliceMembers) members and \(removals) removals")
        }
        let bobHas = { try bob.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) }
        if committed {
            let deleted = (try? bob.waitUntil("\(label): bob deletes the conversation", timeoutMs: 20_000) { try bobHas() == 0 }) != nil
            if !deleted { report.findings.append("\(label): alice's removal committed, bob still has the conversation") }
        } else if try bobHas() != 1 {
            report.findings.append("\(label): nothing committed on alice, yet bob lost the conversation")
        }
    }

    // MARK: - Random kills

    /// Runs `call` (a CLI that asks alice's daemon for the operation) on its own thread,
    /// SIGKILLs alice's daemon `afterMs` later and waits for the call to end. Returns whether
    /// the call reported success: the daemon answered before it died.
    private func killed(_ alice: Device, afterMs delay: Int, report: inout Report,
                        _ call: @escaping @Sendable () throws -> Bool) -> Bool {
        let outcome = CallOutcome()
        Thread {
            outcome.succeeded = (try? call()) ?? false
            outcome.done.signal()
        }.start()
        usleep(useconds_t(delay * 1_000))  // the random kill's moment, not a synchronisation
        alice.stopDaemon(signal: SIGKILL)
        outcome.done.wait()
        report.randomKills += 1
        return outcome.succeeded
    }

    /// What the call of a random round reported; `done` orders the write before the read.
    private final class CallOutcome: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var succeeded = false
    }

    // MARK: - Checks

    /// The ids of alice's side of one conversation, and a push bob's identity can make to it.
    struct Ids {
        let conversationId: String
        let inboxId: String
        let clientId: String
        let alicePublicKey: PublicKey
        let topic: String
        let bob: Identity

        init(alice: Device, bob bobDevice: Device, conversationId: String) throws {
            self.conversationId = conversationId
            let row = try alice.query("SELECT inboxId, clientId, topic FROM conversation WHERE id = ?", [.text(conversationId)])[0]
            inboxId = try row.string(0)
            clientId = try row.string(1)
            topic = try row.string(2)
            alicePublicKey = try Keystore(directory: alice.group.keystorePath, environment: [:])
                .identity(inboxId: inboxId).publicKey
            let bobInbox = try bobDevice.query("SELECT inboxId FROM conversation WHERE id = ?", [.text(conversationId)])[0].string(0)
            bob = try Keystore(directory: bobDevice.group.keystorePath, environment: [:]).identity(inboxId: bobInbox)
        }

        /// A text from bob sealed to alice's identity, as bob's outbox would send it.
        func push() -> [UInt8] {
            let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversationId,
                                            sentAtMs: WallClock.nowMs(), contentType: ContentType.text,
                                            content: Array("probe".utf8), fallback: nil, signer: bob.privateKey)
            let envelope = Envelope.seal(signed.encode(), recipient: alicePublicKey, clientId: clientId, topic: topic)
            return PushPayload(clientId: clientId, topic: topic, envelope: envelope).encode()
        }
    }

    func holding(_ device: Device, _ ids: Ids) throws -> Holding {
        let inbox = try device.query("SELECT count(*) FROM inbox WHERE inboxId = ?", [.text(ids.inboxId)])[0].int64(0)
        let conversation = try device.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(ids.conversationId)])[0].int64(0)
        let tombstones = try device.query("SELECT count(*) FROM inbox_tombstone WHERE clientId = ?", [.text(ids.clientId)])[0].int64(0)
        let keystore = device.group.keystorePath
        let identity = FileManager.default.fileExists(atPath: "\(keystore)/\(ids.clientId).identity")
        let alias = FileManager.default.fileExists(atPath: "\(keystore)/\(ids.inboxId).inbox")
        if inbox == 1, conversation == 1, identity, alias, tombstones == 0 { return .whole }
        if inbox == 0, conversation == 0, !identity, !alias, tombstones == 0 { return .gone }
        return .partial("inbox=\(inbox) conversation=\(conversation) identity=\(identity) alias=\(alias) tombstones=\(tombstones)")
    }

    /// A push to alice's identity: stored or refused as expired while the rows exist;
    /// `unknown_client` once they are gone (a decrypting `unknown_conversation` is the defect).
    func checkPush(_ alice: Device, _ ids: Ids, holding: Holding, label: String, report: inout Report) throws {
        let ack = try PushClient.send(ids.push(), to: alice.runtime.pushSocketPath)
        let parsed = PushAck.parse(Array(ack.utf8))
        let rowsGone = try alice.query("SELECT count(*) FROM inbox WHERE inboxId = ?", [.text(ids.inboxId)])[0].int64(0) == 0
        switch parsed {
        case .ok? where !rowsGone:
            return
        case .error(let error)? where rowsGone && error.code == .unknownClient:
            return
        case .error(let error)? where !rowsGone && error.code == .conversationExpired:
            return
        default:
            report.findings.append("\(label): push to alice answered \(ack.prefix(100)) (rows gone: \(rowsGone), \(holding))")
        }
    }

    func keystoreLeftovers(_ device: Device) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: device.group.keystorePath)
            .filter { name in [".deleted-", ".taken-", ".tmp-"].contains { name.hasPrefix($0) } }
    }

    /// Waits for the armed daemon to kill itself; a round whose step was never reached is noted.
    func waitForDeath(_ alice: Device, _ label: String, _ report: inout Report) throws -> Bool {
        guard try alice.diedAtCrashPoint(label, timeoutMs: 20_000) else {
            report.notReached.append(label)
            return false
        }
        return true
    }
}
