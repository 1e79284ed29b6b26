import SharedStore
import SottoWire

/// Why a local-state change was refused.
public enum LocalStateWriteError: StoreErrorConvertible, Equatable {
    case unknownConversation
    case store(StoreError)

    public init(storeError: StoreError) { self = .store(storeError) }
    public var underlyingStoreError: StoreError? { if case .store(let error) = self { error } else { nil } }
}

/// This device's view of a conversation: read marks, mute, notification preview (whether it
/// is open in a client is `OpenStateWriter`'s).
///
/// ```swift
/// try LocalStateWriter.markRead(conversationId: id, at: now, on: conn)
/// try LocalStateWriter.setMuted(true, conversationId: id, on: conn)
/// ```
public enum LocalStateWriter {
    @discardableResult
    public static func markRead(conversationId: String, at: Int64,
                                on conn: SQLiteConnection) throws(LocalStateWriteError) -> Int64 {
        try update("unreadCount = 0, lastReadAt = ?", [.integer(at)], conversationId, conn)
    }

    /// Marks a conversation unread (at least one unread message).
    @discardableResult
    public static func markUnread(conversationId: String,
                                  on conn: SQLiteConnection) throws(LocalStateWriteError) -> Int64 {
        try update("unreadCount = max(unreadCount, 1)", [], conversationId, conn)
    }

    @discardableResult
    public static func setMuted(_ muted: Bool, conversationId: String,
                                on conn: SQLiteConnection) throws(LocalStateWriteError) -> Int64 {
        try update("muted = ?", [.bool(muted)], conversationId, conn)
    }

    /// What this conversation's notifications show; nil: the device's setting.
    @discardableResult
    public static func setNotificationPreview(_ preview: NotificationPreview?, conversationId: String,
                                              on conn: SQLiteConnection) throws(LocalStateWriteError) -> Int64 {
        try update("notificationPreview = ?", [.optional(preview?.rawValue)], conversationId, conn)
    }

    private static func update(_ assignments: String, _ binds: [SQLiteValue], _ conversationId: String,
                               _ conn: SQLiteConnection) throws(LocalStateWriteError) -> Int64 {
        let changed: Int
        do {
            changed = try conn.run("""
                UPDATE conversation_local_state SET \(assignments) WHERE conversationId = ?
                """, binds + [.text(conversationId)])
        } catch { throw .store(error) }
        guard changed == 1 else { throw .unknownConversation }
        do {
            return try ChangeLog.append(conn, kind: .localStateChanged, conversationId: conversationId,
                                        entityId: nil)
        } catch { throw .store(error) }
    }
}
