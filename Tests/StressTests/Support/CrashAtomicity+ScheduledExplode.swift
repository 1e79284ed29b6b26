import Foundation
import SottoWire
import TestSupport

/// A scheduled explode (`sotto explode ID --in 5s`) killed at a named step, the power cut with
/// it: at the schedule's commit and report (the steps a send and an immediate explode pass),
/// at bob's ack, or when its time comes, in the timer's deletion. After the restart the
/// conversation is whole with no schedule (nothing committed), or whole and still scheduled
/// for the time asked, then gone at that time on both devices, the restarted daemon's timer
/// firing it; never half, and never before its time.
extension CrashAtomicity {
    /// The named steps a scheduled explode passes, in order.
    static let scheduledExplodePoints = ["send.composed", "send.committed", "explode.committed", "outbox.delivered",
                                         "explode.delivered", "explode.rowsCommitted", "keystore.identityWiped",
                                         "explode.keysWiped"]
    /// How far ahead a round schedules: beyond the cut and the restart (≈ 1–3 s under load),
    /// so that the restarted daemon's timer is what fires it.
    static let scheduleDelayMs: Int64 = 5_000

    func scheduledExplodeRound(alice: Device, bob: Device, point: String, power: PowerCutFileSystem?,
                               report: inout Report) throws {
        report.rounds += 1
        let label = "scheduledExplode@\(point)"
        let trip = try DaemonCrash.conversation(creator: alice, joiner: bob)
        let ids = try Ids(alice: alice, bob: bob, conversationId: trip)
        alice.stopDaemon()
        try alice.startDaemon(environment: [CrashPoint.variable: point])
        let asked = WallClock.nowMs()
        _ = try alice.cli(["explode", trip, "--in", "\(Self.scheduleDelayMs)ms", "--json"])
        // The CLI reads its clock between these two: the time it asked for lies in this window.
        let due = (asked + Self.scheduleDelayMs)...(WallClock.nowMs() + Self.scheduleDelayMs)
        guard try waitForDeath(alice, label, &report) else { return }
        report.namedKills += 1
        try cutPower(alice, power, &report)
        let before = try holding(alice, ids)
        try checkPush(alice, ids, holding: before, label: "\(label) before restart", report: &report)

        try alice.startDaemon()
        let restarted = WallClock.nowMs()
        let expiresAt = { (device: Device) throws -> Int64? in
            try device.query("SELECT expiresAt FROM conversation WHERE id = ?", [.text(trip)]).first?.optionalInt64(0)
        }
        let bobHas = { try bob.query("SELECT count(*) FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) == 1 }
        guard try explodeCommitted(alice, ids) else {
            // Nothing on alice's disk: no schedule on either device, nothing deleted.
            let after = try holding(alice, ids)
            let bobKeeps = try bobHas()
            let bobExpires = try expiresAt(bob)
            if after != .whole || !bobKeeps || bobExpires != nil {
                report.findings.append("\(label): not committed, yet alice \(after), bob has it: \(bobKeeps), "
                                       + "bob's expiresAt \(String(describing: bobExpires))")
            }
            return
        }
        // Still scheduled: for the time asked, not moved by the cut.
        if let scheduled = try expiresAt(alice), !due.contains(scheduled) {
            report.findings.append("\(label): alice's explosion time \(scheduled) is not the one asked for (\(due))")
        }
        // Gone at its time on both devices: no earlier, and not much later than the time or the restart.
        var aliceGoneAt: Int64?, bobGoneAt: Int64?
        let deadline = max(due.upperBound, restarted) + 15_000
        let settled = (try? alice.waitUntil("\(label): alice and bob delete it", timeoutMs: deadline - WallClock.nowMs()) {
            let now = WallClock.nowMs()
            if aliceGoneAt == nil, try holding(alice, ids) == .gone { aliceGoneAt = now }
            if bobGoneAt == nil, try !bobHas() { bobGoneAt = now }
            return aliceGoneAt != nil && bobGoneAt != nil
        }) != nil
        let after = try holding(alice, ids)
        if !settled {
            let bobKeeps = try bobHas()
            report.findings.append("\(label): alice \(after), bob has it: \(bobKeeps), \(WallClock.nowMs() - due.upperBound) ms "
                                   + "after its time (before the restart: \(before))")
        }
        for (device, goneAt) in [("alice", aliceGoneAt), ("bob", bobGoneAt)] {
            if let goneAt, goneAt < due.lowerBound {
                report.findings.append("\(label): \(device) deleted it \(due.lowerBound - goneAt) ms before its time")
            }
        }
        try checkPush(alice, ids, holding: after, label: "\(label) after restart", report: &report)
        let leftovers = try keystoreLeftovers(alice)
        if !leftovers.isEmpty { report.findings.append("\(label): keystore leftovers \(leftovers)") }
    }
}
