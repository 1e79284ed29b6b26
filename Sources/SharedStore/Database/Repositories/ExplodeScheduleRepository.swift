import SottoCrypto
import SottoWire

/// The creator's explode decisions a device holds, read back from the conversation's stored
/// `convos.org/explode_settings:1.0` messages (sent or received): which is in force
/// (docs/protocol/explode-schedule.md §3). The sequence the creator's next decision takes is
/// the daemon's read (DaemonStore's `ExplodeRepository.nextScheduleSequence`).
///
/// ```swift
/// let schedule = try ExplodeScheduleRepository.inForce(conversationId: id, creatorInboxId: creator, on: conn)
/// schedule?.expiresAtMs   // nil: cancelled (or never set, when schedule is nil)
/// ```
public enum ExplodeScheduleRepository {
    /// Every decision of the creator stored in the conversation; a row that does not decode
    /// (none is stored that way: the writer refuses it first) is skipped.
    public static func decisions(conversationId: String, creatorInboxId: String,
                                 on conn: SQLiteConnection) throws(StoreError) -> [ExplodeSchedule] {
        let rows = try conn.query("""
            SELECT content, fallback, id FROM message WHERE conversationId = ? AND senderInboxId = ? AND contentType = ?
            """, [.text(conversationId), .text(creatorInboxId), .text(ContentType.explodeSettings)])
        var out: [ExplodeSchedule] = []
        for row in rows {
            let id = try row.string(2)
            guard let content = try conn.openedCell(row.values[0], .messageContent, conversationId: conversationId,
                                                    rowId: id).bytes,
                  case .explodeSettings(let schedule)? = try? MessageContent.decode(
                    contentType: ContentType.explodeSettings, content: content,
                    fallback: try conn.openedText(row.values[1], .messageFallback, conversationId: conversationId, rowId: id))
            else { continue }
            out.append(schedule)
        }
        return out
    }

    /// The creator's decision in force here (``ExplodeSchedule/inForce(_:)``), or nil when it made none.
    public static func inForce(conversationId: String, creatorInboxId: String,
                               on conn: SQLiteConnection) throws(StoreError) -> ExplodeSchedule? {
        ExplodeSchedule.inForce(try decisions(conversationId: conversationId, creatorInboxId: creatorInboxId, on: conn))
    }
}
