import DaemonLogging
import DaemonStore
import Foundation
import RelayTransport
import ServiceLifecycle
import SharedStore
import SottoCrypto
import SottoWire

/// Delivers what the outbox table holds: each due push to its member's endpoint, recording
/// every attempt in the same database (so a restart loses nothing). A device's ok ack marks
/// the push sent; a relay's publish ack (a `nats://`/`tls://` endpoint) marks it relayed
/// (docs/adr/0028); a permanent error marks it failed; a retryable error or an unreachable
/// endpoint or relay schedules a retry with exponential backoff (1 s doubling to 5 min).
/// A push by reference carries the message's sealed body (`outbox_body`, docs/adr/0032):
/// after the push on a direct connection, published to the relay before the push; the body
/// is deleted with the last of the message's pushes that leaves pending.
/// A pass takes up to 1,024 due pushes: a relay's are published a window of 256 at a time
/// without a round trip each, and each window (or 64 direct pushes) is recorded in one
/// transaction (docs/adr/0041). Direct pushes go to up to 8 endpoints at once, each
/// endpoint's one after the other.
/// The same pass delivers the notices that outlive their conversation (an explode whose
/// conversation is deleted here, docs/adr/0034; `OutboxSender+OutlivingNotices.swift`), with
/// the same code and backoff, until each is delivered or older than `noticeMaxAgeMs`.
///
/// ```swift
/// let outbox = OutboxSender(database: db, relay: config)   // run by the daemon's service group (DaemonServices)
/// await outbox.kick()                                      // after queueing a message
/// ```
public actor OutboxSender: Service {
    static let firstRetryMs = PushAttempt.firstRetryMs
    static let maxRetryMs = PushAttempt.maxRetryMs
    /// How long a notice waits for a member who does not come back: 30 days, the relay's
    /// mailbox limit (docs/adr/0030, 0034). `SOTTO_NOTICE_MAX_AGE_MS` overrides it (tests).
    public static let defaultNoticeMaxAgeMs: Int64 = 30 * 86_400_000
    public static let noticeMaxAge = NumberSetting(variable: "SOTTO_NOTICE_MAX_AGE_MS", default: defaultNoticeMaxAgeMs,
                                                  range: 1...(3650 * 86_400_000))

    let database: DaemonDatabase
    private let wakeSignal: WakeSignal
    let relays: RelayConnections
    let noticeMaxAgeMs: Int64
    private(set) var attempts = 0
    /// The last pass took as many pushes as it may: more are due, the next pass starts at once.
    private var passWasFull = false

    /// `relay`: this device's own relay (`SOTTO_RELAY`), whose credentials are used for it alone.
    init(database: DaemonDatabase, relay: RelayConfiguration? = nil, noticeMaxAgeMs: Int64 = OutboxSender.defaultNoticeMaxAgeMs,
         relayIdleMs: Int64 = RelayConnections.defaultIdleMs) {
        self.database = database
        self.noticeMaxAgeMs = noticeMaxAgeMs
        let wakeSignal = WakeSignal()
        self.wakeSignal = wakeSignal
        // A relay that is back: what waits for it may be due already.
        relays = RelayConnections(own: relay, idleMs: relayIdleMs) { wakeSignal.wake() }
    }

    func kick() {
        wakeSignal.wake()
    }

    /// Delivers due pushes until the daemon's graceful shutdown; sleeps until kicked or until
    /// the next retry is due. On the shutdown the push in flight is finished and recorded,
    /// and no other starts: what is still pending is delivered after a restart.
    public func run() async {
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                let nextDue = await deliverDue()
                guard !Task.isShuttingDownGracefully else { return }
                if passWasFull { continue }
                await wakeSignal.sleep(until: nextDue, atMostMs: 60_000, atLeastMs: 10)
            }
        } onGracefulShutdown: { [wakeSignal] in
            wakeSignal.finish()
        }
        // After the last publish returned: nothing uses a connection any more. Closing one that
        // is reconnecting waits for the client's connect attempt (bounded by its timeout).
        await Task.detached { [relays] in relays.closeAll() }.value
    }

    /// One pass over what is due now: the outbox's pushes, then the outliving notices.
    /// Returns when the next pending push or notice is due, if any.
    @discardableResult
    func deliverDue() async -> Int64? {
        let now = WallClock.nowMs()
        relays.forgetPublishedBodies()
        let nextPush = await deliverDueOutbox(now: now)
        let nextNotice = await deliverDueNotices(now: now)
        // After the pass: what it used is fresh, what it did not use may be closed.
        let nextIdle = await Task.detached { [relays] in relays.closeIdle() }.value
        return [nextPush, nextNotice, nextIdle].compactMap { $0 }.min()
    }

    /// Relay connections open now (docs/adr/0044: one per sending conversation, closed when idle).
    var relayConnectionsOpen: Int { relays.openCount }

    /// How many due pushes one pass takes: a fan-out to 1,000 members is one pass.
    static let passLimit = 1_024
    /// Direct pushes (one connection each) recorded together, at most this many at a time.
    static let directRecordEvery = 64
    /// Endpoints a pass delivers to at once (docs/adr/0041).
    static let directLanes = 8

    private func deliverDueOutbox(now: Int64) async -> Int64? {
        guard let due = try? database.read({ conn in try OutboxRepository.due(now: now, limit: Self.passLimit, on: conn) }) else {
            passWasFull = false
            return now + Self.firstRetryMs
        }
        passWasFull = due.count == Self.passLimit
        var bodies = OutboxBodies(database: database)
        var direct: [DuePush] = []
        // One publishing sequence per relay and sending conversation (docs/adr/0044).
        var byRelay: [(endpoint: String, sender: RelaySender, pushes: [DuePush])] = []
        let messageIds = Set(due.map(\.messageId))
        let conversations = (try? database.read { conn in try MessageIdRepository.conversationIds(of: messageIds, on: conn) }) ?? [:]
        var settled: [(DuePush, PushAttempt)] = []
        for item in due {
            let lookup = bodies.lookup(for: item)
            let sender = conversations[item.messageId].map { RelaySender(conversationId: $0) }
                ?? RelaySender(recipientInboxId: item.memberInboxId)  // its message is gone: never shared anyway
            let push = DuePush(item: item, lookup: lookup, sender: sender)
            switch lookup {
            case .missing:
                settled.append((push, .failed(reason: "the body this push references is not stored")))
            case .unreadable(let why):
                settled.append((push, .retry(at: WallClock.nowMs() + PushAttempt.backoffMs(afterAttempts: item.attempts), reason: why)))
            case .inline, .body:
                guard MemberEndpoint.isRelay(item.endpoint) else { direct.append(push); continue }
                if let at = byRelay.firstIndex(where: { $0.endpoint == item.endpoint && $0.sender == sender }) {
                    byRelay[at].pushes.append(push)
                } else {
                    byRelay.append((item.endpoint, sender, [push]))
                }
            }
        }
        await record(settled)
        // Through a relay: a window of publishes at a time, each window recorded in one
        // transaction (docs/adr/0041); a crash loses at most one window's records, and their
        // republish carries the same Nats-Msg-Id.
        for (endpoint, sender, pushes) in byRelay {
            for start in stride(from: 0, to: pushes.count, by: RelayConnection.defaultPublishWindow) {
                if Task.isShuttingDownGracefully { break }
                let window = Array(pushes[start..<min(start + RelayConnection.defaultPublishWindow, pushes.count)])
                let outcomes = await attemptThroughRelay(window.map(\.attempt), endpoint: endpoint, sender: sender)
                await record(Array(zip(window, outcomes)))
            }
        }
        await deliverDirect(direct)
        return try? database.read { conn in try OutboxRepository.nextPendingAttempt(on: conn) } ?? nil
    }

    /// Direct pushes go out on up to `directLanes` endpoints at once, one connection per push;
    /// an endpoint's pushes go one after the other, in their order. A push that must be
    /// retried does not hold back the others (as before the lanes: one member's device may
    /// serve many members, and a test's one socket serves 997).
    private func deliverDirect(_ pushes: [DuePush]) async {
        var lanes: [[DuePush]] = []
        var laneOfEndpoint: [String: Int] = [:]
        for push in pushes {
            if let lane = laneOfEndpoint[push.item.endpoint] {
                lanes[lane].append(push)
            } else {
                laneOfEndpoint[push.item.endpoint] = lanes.count
                lanes.append([push])
            }
        }
        var done: [(DuePush, PushAttempt)] = []
        await withTaskGroup(of: [(DuePush, PushAttempt)].self) { group in
            var next = 0
            while next < min(lanes.count, Self.directLanes) {
                let lane = lanes[next]
                group.addTask { await self.deliverLane(lane) }
                next += 1
            }
            for await finished in group {
                done += finished
                if done.count >= Self.directRecordEvery {
                    await record(done)
                    done = []
                }
                if next < lanes.count, !Task.isShuttingDownGracefully {
                    let lane = lanes[next]
                    group.addTask { await self.deliverLane(lane) }
                    next += 1
                }
            }
        }
        await record(done)
    }

    /// One endpoint's pushes of a pass, in order.
    private func deliverLane(_ lane: [DuePush]) async -> [(DuePush, PushAttempt)] {
        var outcomes: [(DuePush, PushAttempt)] = []
        for push in lane {
            if Task.isShuttingDownGracefully { break }
            outcomes.append((push, await attempt(push.attempt)))
        }
        return outcomes
    }

    /// One due outbox row, its body and its sender.
    private struct DuePush: Sendable {
        let item: DBOutboxItem
        let lookup: OutboxBodies.Lookup
        let sender: RelaySender

        var attempt: PushAttempt.Push {
            // The id the push names (its row's, as composed) for the body stored beside it.
            let body: PushAttempt.Body? = if case .body(let body) = lookup, let bodyId = item.bodyId {
                PushAttempt.Body(id: bodyId, sealed: body.sealed)
            } else {
                nil
            }
            return PushAttempt.Push(endpoint: item.endpoint, clientId: item.clientId, payload: item.payload, body: body,
                                    attempts: item.attempts, sender: sender)
        }
    }

    /// Records what came of `outcomes` in one transaction: each row's state, each message's
    /// status and change once, and the body of a message none of whose pushes is pending.
    private func record(_ outcomes: [(DuePush, PushAttempt)]) async {
        guard !outcomes.isEmpty else { return }
        let attempts = outcomes.map { push, outcome in
            let (state, nextAttempt, lastError): (DBOutboxItem.State, Int64, String?) = switch outcome {
            case .sent: (.sent, WallClock.nowMs(), nil)
            case .relayed: (.relayed, WallClock.nowMs(), nil)
            case .retry(let at, let reason): (.pending, at, reason)
            case .failed(let reason): (.failed, WallClock.nowMs(), reason)
            }
            return RecordedAttempt(messageId: push.item.messageId, memberInboxId: push.item.memberInboxId, state: state,
                                   nextAttemptAt: nextAttempt, lastError: lastError)
        }
        // The last push of a message that leaves pending takes its body with it.
        var released: Set<String> = []
        for (index, attempt) in attempts.enumerated() where attempt.state != .pending && outcomes[index].0.lookup != .inline {
            released.insert(attempt.messageId)
        }
        let bodies = released
        do {
            try await database.write { conn in
                try OutgoingMessageWriter.recordAttempts(attempts, on: conn)
                for messageId in bodies { try OutboxBodyWriter.releaseIfDone(messageId: messageId, on: conn) }
            }
        } catch {
            // Not silent: the pushes stay pending and are tried again (a relay drops the copy).
            DaemonLog.warning("could not record \(attempts.count) push outcome(s), they will be retried: \(error)")
        }
    }

    /// Publishes a window of pushes to one relay off the actor's executor.
    private func attemptThroughRelay(_ pushes: [PushAttempt.Push], endpoint: String, sender: RelaySender) async -> [PushAttempt] {
        attempts += pushes.count
        let results = await Task.detached { [relays] in RelayPublisher.publishAll(pushes, to: endpoint, as: sender, via: relays) }.value
        return zip(pushes, results).map { push, result in Self.attempt(from: result, attempts: push.attempts) }
    }

    /// What a relay's answer means for the push (`outbox.relayed`: the relay stored it, this
    /// database does not say so yet).
    private static func attempt(from result: RelayPublisher.Outcome, attempts: Int64) -> PushAttempt {
        switch result {
        case .relayed:
            CrashPoint.reach("outbox.relayed")  // stored by the relay, not yet recorded here
            return .relayed
        case .unreachable(let reason):
            return .retry(at: WallClock.nowMs() + PushAttempt.backoffMs(afterAttempts: attempts), reason: reason)
        case .badEndpoint(let reason):
            return .failed(reason: reason)
        }
    }

    // MARK: - One push

    /// Delivers one push (to a device, or to a relay) off the actor's executor, and says what
    /// came of it. The one delivery path of both queues. A push's body goes to a device after
    /// the push on the same connection (docs/protocol/bodies.md §5) and to a relay before the
    /// push, once per relay (§6): a push whose body is not on the relay would be terminated by
    /// the member's relayd; a body the relay did not take leaves the push to retry.
    func attempt(_ push: PushAttempt.Push) async -> PushAttempt {
        attempts += 1
        let backoff = PushAttempt.backoffMs(afterAttempts: push.attempts)
        if MemberEndpoint.isRelay(push.endpoint) {
            let result = await Task.detached { [relays] () -> RelayPublisher.Outcome in
                if let body = push.body {
                    let published = RelayPublisher.publishBody(sealed: body.sealed, bodyId: body.id, to: push.endpoint,
                                                               as: push.sender, via: relays)
                    guard case .relayed = published else { return published }
                }
                return RelayPublisher.publish(push, via: relays)
            }.value
            return Self.attempt(from: result, attempts: push.attempts)
        }
        let result = await BlockingDelivery.run { PushDelivery.deliver(push.payload, body: push.body?.sealed, to: push.endpoint) }
        CrashPoint.reach("outbox.delivered")  // acked by the member, not yet recorded here
        switch result {
        case .acked(let ack) where ack.ok:
            return .sent
        case .acked(let ack) where ack.retry:
            return .retry(at: WallClock.nowMs() + backoff, reason: ack.error ?? "retry")
        case .acked(let ack):
            return .failed(reason: ack.error ?? "rejected")
        case .unreachable(let reason):
            return .retry(at: WallClock.nowMs() + backoff, reason: reason)
        case .badEndpoint(let reason):
            return .failed(reason: reason)
        }
    }
}
