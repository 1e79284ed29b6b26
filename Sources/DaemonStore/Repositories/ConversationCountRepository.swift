import SharedStore

/// How many conversations this device holds (`sotto status`): the daemon's count, not a query
/// the worker runs, so it is not in SharedStore's ``ConversationRepository``.
///
/// ```swift
/// let conversations = try ConversationCountRepository.count(on: conn)
/// ```
public enum ConversationCountRepository {
    public static func count(on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.queryOne("SELECT count(*) FROM conversation")?.int64(0) ?? 0
    }
}
