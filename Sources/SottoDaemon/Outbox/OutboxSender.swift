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
///
/// ```swift
/// let outbox = OutboxSender(database: db, relay: config)   // run by the daemon's service group (DaemonServices)
/// await outbox.kick()                                      // after queueing a message
/// ```
actor OutboxSender: Service {
    static let firstRetryMs: Int64 = 1_000
    static let maxRetryMs: Int64 = 300_000

    private let database: DaemonDatabase
    private let wakeSignal: WakeSignal
    private let relays: RelayConnections
    private(set) var attempts = 0

    /// `relay`: this device's own relay (`SOTTO_RELAY`), whose credentials are used for it alone.
    init(database: DaemonDatabase, relay: RelayConfiguration? = nil) {
        self.database = database
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

    /// One pass over what is due now. Returns when the next pending push is due, if any.
    @discardableResult
    func deliverDue() async -> Int64? {
        let now = WallClock.nowMs()
        guard let due = try? database.read({ conn in try OutboxRepository.due(now: now, limit: 64, on: conn) }) else {
            return now + Self.firstRetryMs
        }
        var bodies = OutboxBodies(database: database)
        for item in due {
            if Task.isShuttingDownGracefully { break }
            attempts += 1
            let (state, nextAttempt, lastError): (DBOutboxItem.State, Int64, String?)
            let lookup = bodies.lookup(for: item)
            switch lookup {
            case .inline: (state, nextAttempt, lastError) = await attempt(item, body: nil)
            case .body(let body): (state, nextAttempt, lastError) = await attempt(item, body: body)
            case .missing: (state, nextAttempt, lastError) = (.failed, WallClock.nowMs(), "the body this push references is not stored")
            case .unreadable(let why): (state, nextAttempt, lastError) = (.pending, WallClock.nowMs() + Self.backoff(item), why)
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

    /// 1 s after the first attempt, doubling to 5 min.
    static func backoff(_ item: DBOutboxItem) -> Int64 {
        min(firstRetryMs << min(Int64(item.attempts), 20), maxRetryMs)
    }

    /// Delivers one push (to a device, or to a relay) off the actor's executor, and says how
    /// its row is to be recorded. `body`: the sealed body the push references, which a device
    /// gets after the push on the same connection (docs/protocol/bodies.md §5) and a relay
    /// gets before the push (§6); a body the relay did not take leaves the push pending with
    /// the relay's reason, like any relay failure.
    private func attempt(_ item: DBOutboxItem, body: OutboxBodyRepository.Body?) async -> (DBOutboxItem.State, Int64, String?) {
        let backoff = Self.backoff(item)
        if RelayPublisher.isRelayEndpoint(item.endpoint) {
            // The body first, once per relay (docs/protocol/bodies.md §6): a push whose body
            // is not on the relay would be terminated by the member's relayd.
            let result = await Task.detached { [relays] () -> RelayPublisher.Outcome in
                if let body {
                    let stored = RelayPublisher.publishBody(sealed: body.sealed, bodyId: body.bodyId, to: item.endpoint, via: relays)
                    guard case .relayed = stored else { return stored }
                }
                return RelayPublisher.publish(item.payload, to: item.endpoint, via: relays)
            }.value
            switch result {
            case .relayed:
                CrashPoint.reach("outbox.relayed")  // stored by the relay, not yet recorded here
                return (.relayed, WallClock.nowMs(), nil)
            case .unreachable(let reason):
                return (.pending, WallClock.nowMs() + backoff, reason)
            case .badEndpoint(let reason):
                return (.failed, WallClock.nowMs(), reason)
            }
        }
        let result = await Task.detached { PushDelivery.deliver(item.payload, body: body?.sealed, to: item.endpoint) }.value
        CrashPoint.reach("outbox.delivered")  // acked by the member, not yet recorded here
        switch result {
        case .acked(let ack) where ack.ok:
            return (.sent, WallClock.nowMs(), nil)
        case .acked(let ack) where ack.retry:
            return (.pending, WallClock.nowMs() + backoff, ack.error ?? "retry")
        case .acked(let ack):
            return (.failed, WallClock.nowMs(), ack.error ?? "rejected")
        case .unreachable(let reason):
            return (.pending, WallClock.nowMs() + backoff, reason)
        case .badEndpoint(let reason):
            return (.failed, WallClock.nowMs(), reason)
        }
    }
}
