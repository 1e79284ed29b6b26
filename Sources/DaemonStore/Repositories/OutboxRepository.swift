import SharedStore

/// Read-only queries over `outbox` (the daemon's queue of pushes; the worker never reads it).
///
/// ```swift
/// let due = try OutboxRepository.due(now: WallClock.nowMs(), limit: 20, on: conn)
/// ```
public enum OutboxRepository {
    /// Pending pushes whose next attempt time has come, earliest first.
    public static func due(now: Int64, limit: Int, on conn: SQLiteConnection) throws(StoreError) -> [DBOutboxItem] {
        var out: [DBOutboxItem] = []
        for row in try conn.query("""
            SELECT \(DBOutboxItem.columns) FROM outbox
            WHERE state = 'pending' AND nextAttemptAt <= ? ORDER BY nextAttemptAt LIMIT ?
            """, [.integer(now), .integer(Int64(max(0, limit)))]) {
            out.append(try DBOutboxItem(row: row))
        }
        return out
    }

    public static func items(messageId: String, on conn: SQLiteConnection) throws(StoreError) -> [DBOutboxItem] {
        var out: [DBOutboxItem] = []
        for row in try conn.query("""
            SELECT \(DBOutboxItem.columns) FROM outbox WHERE messageId = ? ORDER BY memberInboxId
            """, [.text(messageId)]) {
            out.append(try DBOutboxItem(row: row))
        }
        return out
    }

    // MARK: - The next push due, and one message's pushes (explode, `sotto read`)

    /// When the earliest pending push is due, if any push is pending.
    ///
    /// ```swift
    /// let next = try OutboxRepository.nextPendingAttempt(on: conn)   // nil: nothing to send
    /// ```
    public static func nextPendingAttempt(on conn: SQLiteConnection) throws(StoreError) -> Int64? {
        try conn.queryOne("SELECT min(nextAttemptAt) FROM outbox WHERE state = 'pending'")?.optionalInt64(0)
    }

    /// How one message's pushes stand: acked by the device, stored by the relay, still
    /// pending, given up.
    public struct DeliveryCounts: Sendable, Equatable {
        public let sent: Int
        public let relayed: Int
        public let pending: Int
        public let failed: Int
    }

    /// The state of every push of `messageId` (zeros when it has none).
    public static func deliveryCounts(messageId: String, on conn: SQLiteConnection) throws(StoreError) -> DeliveryCounts {
        let row = try conn.queryOne("""
            SELECT coalesce(sum(state IN ('sent', 'delivered')), 0), coalesce(sum(state = 'relayed'), 0),
                   coalesce(sum(state = 'pending'), 0), coalesce(sum(state = 'failed'), 0)
            FROM outbox WHERE messageId = ?
            """, [.text(messageId)])
        return DeliveryCounts(sent: Int(try row?.int64(0) ?? 0), relayed: Int(try row?.int64(1) ?? 0),
                              pending: Int(try row?.int64(2) ?? 0), failed: Int(try row?.int64(3) ?? 0))
    }

    /// One push of one of our messages as `sotto read` shows it.
    public struct MemberDelivery: Sendable, Equatable {
        public let memberInboxId: String
        public let state: DBOutboxItem.State
        public let attempts: Int64
        public let lastError: String?

        public init(memberInboxId: String, state: DBOutboxItem.State, attempts: Int64, lastError: String?) {
            self.memberInboxId = memberInboxId
            self.state = state
            self.attempts = attempts
            self.lastError = lastError
        }
    }

    /// The pushes of each of `messageIds` (our outgoing messages), by message id, each
    /// message's members in inbox id order. Messages without pushes are absent.
    ///
    /// ```swift
    /// let deliveries = try OutboxRepository.deliveries(messageIds: ids, on: conn)
    /// deliveries[id]?.map(\.state)   // [.relayed, .sent]
    /// ```
    public static func deliveries(messageIds: [String], on conn: SQLiteConnection) throws(StoreError) -> [String: [MemberDelivery]] {
        var out: [String: [MemberDelivery]] = [:]
        for messageId in messageIds {
            var rows: [MemberDelivery] = []
            for row in try conn.query("""
                SELECT memberInboxId, state, attempts, lastError FROM outbox WHERE messageId = ? ORDER BY memberInboxId
                """, [.text(messageId)]) {
                guard let state = DBOutboxItem.State(rawValue: try row.string(1)) else {
                    throw .sqlite(code: SQLiteResultCode.mismatch, message: "outbox.state has an unknown value")
                }
                rows.append(MemberDelivery(memberInboxId: try row.string(0), state: state, attempts: try row.int64(2),
                                           lastError: try row.optionalString(3)))
            }
            if !rows.isEmpty { out[messageId] = rows }
        }
        return out
    }
}
