import Glibc
import SottoWire

/// Appends to `change_log`. Every writer calls it in the same transaction as its change, so
/// a change and its entry commit or roll back together.
///
/// ```swift
/// let seq = try ChangeLog.append(conn, kind: .messageInserted,
///                                conversationId: id, entityId: messageId, now: now)
/// ```
public enum ChangeLog {
    @discardableResult
    public static func append(_ conn: SQLiteConnection, kind: ChangeKind, conversationId: String?,
                              entityId: String?, now: Int64 = WallClock.nowMs()) throws(StoreError) -> Int64 {
        try conn.run("""
            INSERT INTO change_log(kind, conversationId, entityId, writerPid, createdAt)
            VALUES (?, ?, ?, ?, ?)
            """, [.text(kind.rawValue), .optional(conversationId), .optional(entityId),
                  .integer(Int64(getpid())), .integer(now)])
        return conn.lastInsertRowID
    }
}
