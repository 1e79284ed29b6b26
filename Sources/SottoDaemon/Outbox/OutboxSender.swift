import Foundation
import DaemonStore
import ServiceLifecycle
import SharedStore

/// Delivers what the outbox table holds: each due push to its member's endpoint, recording
/// every attempt in the same database (so a restart loses nothing). An ok ack marks the
/// push sent; a permanent error marks it failed; a retryable error or an unreachable
/// endpoint schedules a retry with exponential backoff (1 s doubling to 5 min).
///
/// ```swift
/// let outbox = OutboxSender(database: db)   // run by the daemon's service group (DaemonServices)
/// await outbox.kick()                       // after queueing a message
/// ```
actor OutboxSender: Service {
    static let firstRetryMs: Int64 = 1_000
    static let maxRetryMs: Int64 = 300_000

    private let database: DaemonDatabase
    private let wakeSignal = WakeSignal()
    private(set) var attempts = 0

    init(database: DaemonDatabase) {
        self.database = database
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
    }

    /// One pass over what is due now. Returns when the next pending push is due, if any.
    @discardableResult
    func deliverDue() async -> Int64? {
        let now = WallClock.nowMs()
        guard let due = try? database.read({ conn in try OutboxRepository.due(now: now, limit: 64, on: conn) }) else {
            return now + Self.firstRetryMs
        }
        for item in due {
            if Task.isShuttingDownGracefully { break }
            attempts += 1
            let result = await Task.detached { PushDelivery.deliver(item.payload, to: item.endpoint) }.value
            CrashPoint.reach("outbox.delivered")  // acked by the member, not yet recorded here
            let backoff = min(Self.firstRetryMs << min(Int64(item.attempts), 20), Self.maxRetryMs)
            let (state, nextAttempt, lastError): (DBOutboxItem.State, Int64, String?)
            switch result {
            case .acked(let ack) where ack.ok:
                (state, nextAttempt, lastError) = (.sent, WallClock.nowMs(), nil)
            case .acked(let ack) where ack.retry:
                (state, nextAttempt, lastError) = (.pending, WallClock.nowMs() + backoff, ack.error ?? "retry")
            case .acked(let ack):
                (state, nextAttempt, lastError) = (.failed, WallClock.nowMs(), ack.error ?? "rejected")
            case .unreachable(let reason):
                (state, nextAttempt, lastError) = (.pending, WallClock.nowMs() + backoff, reason)
            case .badEndpoint(let reason):
                (state, nextAttempt, lastError) = (.failed, WallClock.nowMs(), reason)
            }
            _ = try? await database.write { conn in
                try OutgoingMessageWriter.recordAttempt(messageId: item.messageId, memberInboxId: item.memberInboxId,
                                                        state: state, nextAttemptAt: nextAttempt,
                                                        lastError: lastError, on: conn)
            }
        }
        return try? database.read { conn in try OutboxRepository.nextPendingAttempt(on: conn) } ?? nil
    }
}
