import SharedStore
import SottoWire

/// The creator's own copy of a removal (`sotto remove`, docs/protocol/leave-remove.md §6):
/// the member's rows go in the transaction that stores the `sotto/remove:1.0` and its pushes,
/// so every message composed after it is sealed to the others only.
///
/// ```swift
/// try MemberRemovalWriter.remove(inboxId: bob, conversationId: id, on: conn)
/// ```
public enum MemberRemovalWriter {
    public static func remove(inboxId: String, conversationId: String, now: Int64 = WallClock.nowMs(),
                              on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("DELETE FROM member WHERE conversationId = ? AND inboxId = ?", [.text(conversationId), .text(inboxId)])
        try conn.run("DELETE FROM member_profile WHERE conversationId = ? AND inboxId = ?",
                     [.text(conversationId), .text(inboxId)])
        try ChangeLog.append(conn, kind: .membersChanged, conversationId: conversationId, entityId: nil, now: now)
    }
}
