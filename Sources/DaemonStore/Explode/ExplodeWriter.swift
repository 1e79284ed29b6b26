import SharedStore

/// Mutations behind exploding conversations that are not a deletion (that is
/// ``InboxDeletion``): an `expiresAt` only counts as far as the creator's own explode_settings
/// message backs it (docs/protocol-rules.md).
///
/// ```swift
/// let backed = try ExplodeRepository.creatorExpiry(conversationId: id, creatorInboxId: creator, on: conn)
/// try ExplodeWriter.correctExpiry(conversationId: id, from: due.expiresAt, to: backed, on: conn)
/// ```
public enum ExplodeWriter {
    /// Sets the conversation's `expiresAt` to `to` (nil clears it) if it is still `from`, so a
    /// time a newer explode message set in between is left alone. Returns whether it changed.
    @discardableResult
    public static func correctExpiry(conversationId: String, from: Int64, to: Int64?,
                                     on conn: SQLiteConnection) throws(StoreError) -> Bool {
        try conn.run("UPDATE conversation SET expiresAt = ? WHERE id = ? AND expiresAt = ?",
                     [.optional(to), .text(conversationId), .integer(from)]) > 0
    }
}
