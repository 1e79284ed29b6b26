import SharedStore

/// The daemon's reads of `inbox_tombstone` (ADR 0016): the deleted identities whose keystore
/// files a restart or a sweep still has to wipe. The worker's one read of the table, whether a
/// push's clientId is a deleted inbox's, is SharedStore's `TombstoneRepository`.
///
/// ```swift
/// for tombstone in try TombstoneWipeRepository.all(on: conn) { … wipe, then InboxDeletion.finish … }
/// let left = try TombstoneWipeRepository.find(inboxId: inboxId, on: conn)
/// ```
public enum TombstoneWipeRepository {
    public static func all(on conn: SQLiteConnection) throws(StoreError) -> [InboxTombstone] {
        try conn.query("SELECT clientId, inboxId FROM inbox_tombstone ORDER BY deletedAt, clientId").map { row throws(StoreError) in
            InboxTombstone(clientId: try row.string(0), inboxId: try row.string(1))
        }
    }

    public static func find(inboxId: String, on conn: SQLiteConnection) throws(StoreError) -> InboxTombstone? {
        guard let row = try conn.queryOne("SELECT clientId, inboxId FROM inbox_tombstone WHERE inboxId = ?",
                                          [.text(inboxId)]) else { return nil }
        return InboxTombstone(clientId: try row.string(0), inboxId: try row.string(1))
    }
}
