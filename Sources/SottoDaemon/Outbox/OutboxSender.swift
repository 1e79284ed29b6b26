import Foundation
import DaemonStore
import RelayTransport
import ServiceLifecycle
import SharedStore

/// Delivers what the outbox table holds: each due push to its member's endpoint, recording
/// every attempt in the same database (so a restart loses nothing). A device's ok ack marks
/// the push sent; a relay's publish ack (a `nats://`/`tls://` endpoint) marks it relayed
/// (docs/adr/0028); a permanent error marks it failed; a retryable error or an unreachable
/// endpoint or relay schedules a retry with exponential backoff (1 s doubling to 5 min).
/// A push by reference carries the message's sealed body (`outbox_body`, docs/adr/0032):
/// after the push on a direct connection, published to the relay before the push; the body
/// is deleted with the last of the message's pushes that leaves pending.
/// The same pass delivers the notices that outlive their conversation (an explode whose
/// conversation is deleted here, docs/adr/0034; `OutboxSender+OutlivingNotices.swift`), with
/// the same code and backoff, until each is delivered or older than `noticeMaxAgeMs`.
///
/// ```swift
/// let outbox = OutboxSender(database: db, relay: config)   // run by the daemon's service group (DaemonServices)
/// await outbox.kick()                                      // after queueing a message
/// ```
actor OutboxSender: Service {
    static let firstRetryMs = PushAttempt.firstRetryMs
    static let maxRetryMs = PushAttempt.maxRetryMs
    /// How long a notice waits for a member who does not come back: 30 days, the relay's
    /// mailbox limit (docs/adr/0030, 0034). `SOTTO_NOTICE_MAX_AGE_MS` overrides it (tests).
    static let defaultNoticeMaxAgeMs: Int64 = 30 * 86_400_000
    static let noticeMaxAge = MillisecondsSetting(variable: "SOTTO_NOTICE_MAX_AGE_MS", defaultMs: defaultNoticeMaxAgeMs,
                                                  range: 1...(3650 * 86_400_000))

    let database: DaemonDatabase
    private let wakeSignal: WakeSignal
    private let relays: RelayConnections
    let noticeMaxAgeMs: Int64
    private(set) var attempts = 0

    /// `relay`: this device's own relay (`SOTTO_RELAY`), whose credentials are used for it alone.
    init(database: DaemonDatabase, relay: RelayConfiguration? = nil, noticeMaxAgeMs: Int64 = OutboxSender.defaultNoticeMaxAgeMs) {
        self.database = database
        self.noticeMaxAgeMs = noticeMaxAgeMs
        let wakeSignal = WakeSignal()
        self.wakeSignal = wakeSignal
        // A relay that is back: what waits for it may be due already.
        relays = RelayConnections(own: relay) { wakeSignal.wake() }
    }

    func kick() {
        wakeSignal.wake()
    }

    /// Delivers due pushes until the daemon's graceful shutdown; sleeps until kicked or until
    /// the next retry is due. On the shutdown the push in flight is finished and recorded,
    /// and no other starts: what is still pending is delivered after a restart.
    func run() async {
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                let nextDue = await deliverDue()
                guard !Task.isShuttingDownGracefully else { return }
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
        let nextPush = await deliverDueOutbox(now: now)
        let nextNotice = await deliverDueNotices(now: now)
        guard let nextPush else { return nextNotice }
        guard let nextNotice else { return nextPush }
        return min(nextPush, nextNotice)
    }

    private func deliverDueOutbox(now: Int64) async -> Int64? {
        guard let due = try? database.read({ conn in try OutboxRepository.due(now: now, limit: 64, on: conn) }) else {
            return now + Self.firstRetryMs
        }
        var bodies = OutboxBodies(database: database)
        for item in due {
            if Task.isShuttingDownGracefully { break }
            let lookup = bodies.lookup(for: item)
            let outcome: PushAttempt
            switch lookup {
            case .inline:
                outcome = await attempt(PushAttempt.Push(endpoint: item.endpoint, payload: item.payload, body: nil,
                                                         attempts: item.attempts))
            case .body(let body):
                outcome = await attempt(PushAttempt.Push(endpoint: item.endpoint, payload: item.payload, body: body.sealed,
                                                         attempts: item.attempts))
            case .missing:
                outcome = .failed(reason: "the body this push references is not stored")
            case .unreadable(let why):
                outcome = .retry(at: WallClock.nowMs() + PushAttempt.backoffMs(afterAttempts: item.attempts), reason: why)
            }
            let (state, nextAttempt, lastError): (DBOutboxItem.State, Int64, String?) = switch outcome {
            case .sent: (.sent, WallClock.nowMs(), nil)
            case .relayed: (.relayed, WallClock.nowMs(), nil)
            case .retry(let at, let reason): (.pending, at, reason)
            case .failed(let reason): (.failed, WallClock.nowMs(), reason)
            }
            _ = try? await database.write { conn in
                try OutgoingMessageWriter.recordAttempt(messageId: item.messageId, memberInboxId: item.memberInboxId,
                                                        state: state, nextAttemptAt: nextAttempt,
                                                        lastError: lastError, on: conn)
                // The last push of the message that leaves pending takes its body with it.
                if lookup != .inline, state != .pending { try OutboxBodyWriter.releaseIfDone(messageId: item.messageId, on: conn) }
            }
        }
        return try? database.read { conn in try OutboxRepository.nextPendingAttempt(on: conn) } ?? nil
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
        if RelayPublisher.isRelayEndpoint(push.endpoint) {
            let result = await Task.detached { [relays] () -> RelayPublisher.Outcome in
                if let body = push.body, let bodyId = try? PushPayload.decode(push.payload).body?.id {
                    let published = RelayPublisher.publishBody(sealed: body, bodyId: bodyId, to: push.endpoint, via: relays)
                    guard case .relayed = published else { return published }
                }
                return RelayPublisher.publish(push.payload, to: push.endpoint, via: relays)
            }.value
            switch result {
            case .relayed:
                CrashPoint.reach("outbox.relayed")  // stored by the relay, not yet recorded here
                return .relayed
            case .unreachable(let reason):
                return .retry(at: WallClock.nowMs() + backoff, reason: reason)
            case .badEndpoint(let reason):
                return .failed(reason: reason)
            }
        }
        let result = await Task.detached { PushDelivery.deliver(push.payload, body: push.body, to: push.endpoint) }.value
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
