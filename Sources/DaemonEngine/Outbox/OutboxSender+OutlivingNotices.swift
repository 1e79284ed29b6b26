import DaemonLogging
import DaemonStore
import SottoWire

/// Delivery of the notices that outlive their conversation (docs/adr/0034): the outbox's
/// pass hands each due notice to the same `attempt` as an outbox push (`PushDelivery` to a
/// device, `RelayPublisher` to a relay, the same backoff), then records it in
/// `OutlivingNoticeWriter`: delivered or refused for good, it is gone; otherwise it waits
/// for its next attempt. Notices older than `noticeMaxAgeMs` are dropped first.
///
/// ```swift
/// let next = await outbox.deliverDueNotices(now: WallClock.nowMs())   // part of deliverDue()
/// ```
extension OutboxSender {
    /// One pass over the due notices. Returns when the next one is due, if any.
    func deliverDueNotices(now: Int64) async -> Int64? {
        let maxAge = noticeMaxAgeMs
        if let dropped = try? await database.write({ conn in
            try OutlivingNoticeWriter.dropExpired(queuedBefore: now - maxAge, on: conn)
        }), dropped > 0 {
            DaemonLog.warning("dropped \(dropped) undelivered notice(s) of deleted conversations after \(maxAge / 1_000) s")
        }
        guard let due = try? database.read({ conn in try OutlivingNoticeRepository.due(now: now, limit: 64, on: conn) }) else {
            return now + Self.firstRetryMs
        }
        for notice in due {
            if Task.isShuttingDownGracefully { break }
            let body = notice.bodyId.flatMap { id in notice.sealedBody.map { PushAttempt.Body(id: id, sealed: $0) } }
            let outcome = await attempt(PushAttempt.Push(endpoint: notice.endpoint, clientId: notice.clientId,
                                                         payload: notice.payload, body: body, attempts: notice.attempts,
                                                         sender: RelaySender(recipientClientId: notice.clientId)))
            let record: OutlivingNoticeWriter.Outcome
            switch outcome {
            case .sent, .relayed:
                CrashPoint.reach("notice.delivered")  // the member has it; the notice is not deleted yet
                record = .delivered
            case .retry(let at, let reason):
                record = .retry(at: at, error: reason)
            case .failed(let reason):
                // e.g. `unknown_client`: the member's device already deleted the conversation.
                DaemonLog.info("a notice of a deleted conversation was refused for good (\(reason)); dropped")
                record = .refused(reason)
            }
            _ = try? await database.write { conn in try OutlivingNoticeWriter.record(id: notice.id, record, on: conn) }
        }
        return try? database.read { conn in try OutlivingNoticeRepository.nextAttempt(on: conn) } ?? nil
    }
}
