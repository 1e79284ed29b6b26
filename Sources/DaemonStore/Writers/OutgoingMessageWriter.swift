import SharedStore

/// Why an outgoing message could not be stored or updated.
public enum OutgoingWriteError: StoreErrorConvertible, Equatable {
    case unknownConversation
    case conversationExpired
    case duplicateMessage
    case unknownMessage
    case store(StoreError)

    public init(storeError: StoreError) { self = .store(storeError) }
    public var underlyingStoreError: StoreError? { if case .store(let error) = self { error } else { nil } }
}

/// One of our own messages, already signed and encrypted per recipient.
///
/// ```swift
/// let out = OutgoingMessage(id: mid, conversationId: cid, senderInboxId: me, sentAtMs: now,
///                           contentType: "xmtp.org/text:1.0", content: Array("hi".utf8),
///                           fallback: nil, referenceId: nil)
/// ```
public struct OutgoingMessage: Sendable, Equatable {
    public var id: String
    public var conversationId: String
    public var senderInboxId: String
    public var sentAtMs: Int64
    public var contentType: String
    public var content: [UInt8]
    public var fallback: String?
    public var referenceId: String?

    public init(id: String, conversationId: String, senderInboxId: String, sentAtMs: Int64,
                contentType: String, content: [UInt8], fallback: String?, referenceId: String?) {
        self.id = id
        self.conversationId = conversationId
        self.senderInboxId = senderInboxId
        self.sentAtMs = sentAtMs
        self.contentType = contentType
        self.content = content
        self.fallback = fallback
        self.referenceId = referenceId
    }
}

/// One push to queue: the payload for one member's device, with the address it was sealed
/// to, so the outbox never decodes its own push to find it (schema v13).
///
/// ```swift
/// let entry = OutboxEntry(memberInboxId: member.inboxId, endpoint: member.endpoint, clientId: member.clientId,
///                         bodyId: hint?.id, payload: payload.encode())
/// ```
public struct OutboxEntry: Sendable, Equatable {
    public var memberInboxId: String
    public var endpoint: String
    /// The clientId the push names (its relay mailbox `sotto.mb.<clientId>`).
    public var clientId: String
    /// The body the push references (docs/protocol/bodies.md), nil when it carries its message.
    public var bodyId: String?
    public var payload: [UInt8]

    public init(memberInboxId: String, endpoint: String, clientId: String, bodyId: String?, payload: [UInt8]) {
        self.memberInboxId = memberInboxId
        self.endpoint = endpoint
        (self.clientId, self.bodyId) = (clientId, bodyId)
        self.payload = payload
    }
}

/// Stores our own messages with their pushes, and records delivery.
///
/// ```swift
/// try OutgoingMessageWriter.insert(out, pushes: entries, now: now, on: conn)
/// try OutgoingMessageWriter.recordAttempt(messageId: mid, memberInboxId: them, state: .sent,
///                                         nextAttemptAt: now, lastError: nil, on: conn)
/// ```
public enum OutgoingMessageWriter {
    /// Inserts the message (`deliveryStatus` pending, or sent when there is nobody to push to)
    /// and one outbox row per push. Returns the change_log seq.
    @discardableResult
    public static func insert(_ m: OutgoingMessage, pushes: [OutboxEntry], now: Int64,
                              on conn: SQLiteConnection) throws(OutgoingWriteError) -> Int64 {
        guard let conversation = try store({ () throws(StoreError) in
            try ConversationRepository.find(id: m.conversationId, on: conn)
        }), conversation.inboxId == m.senderInboxId else { throw .unknownConversation }
        if let expiresAt = conversation.expiresAt, expiresAt <= now { throw .conversationExpired }
        if try store({ () throws(StoreError) in
            try conn.queryOne("SELECT 1 FROM message WHERE id = ?", [.text(m.id)])
        }) != nil { throw .duplicateMessage }

        return try store { () throws(StoreError) -> Int64 in
            let status: DBMessage.DeliveryStatus = pushes.isEmpty ? .sent : .pending
            try conn.run("""
                INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType,
                    content, fallback, referenceId, isOutgoing, deliveryStatus)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
                """, [.text(m.id), .text(m.conversationId), .text(m.senderInboxId), .integer(m.sentAtMs),
                      .integer(now), .text(m.contentType),
                      try conn.sealedCell(m.content, .messageContent, conversationId: m.conversationId, rowId: m.id),
                      try conn.sealedCell(text: m.fallback, .messageFallback, conversationId: m.conversationId, rowId: m.id),
                      .optional(m.referenceId), .text(status.rawValue)])
            let outbox = try conn.prepare("""
                INSERT INTO outbox(messageId, memberInboxId, endpoint, clientId, bodyId, payload, state, attempts, nextAttemptAt)
                VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?)
                """)
            for push in pushes {
                try outbox.bind([.text(m.id), .text(push.memberInboxId), .text(push.endpoint), .text(push.clientId),
                                 .optional(push.bodyId), .blob(push.payload), .integer(now)])
                while try outbox.step() {}
            }
            try InboxWriter.touch(inboxId: conversation.inboxId, at: now, on: conn)
            return try ChangeLog.append(conn, kind: .messageInserted, conversationId: m.conversationId,
                                        entityId: m.id, now: now)
        }
    }

    /// Records one push attempt and recomputes the message's status: pending while a push is
    /// pending, else failed when one failed, else sent (every push acked by its device or
    /// stored by its relay: `message.deliveryStatus` keeps its three values; the per-member
    /// states tell `relayed` from `sent`, docs/adr/0028). A push a receipt already marked
    /// `delivered` (docs/protocol/receipts.md: it can overtake the ack) stays delivered.
    @discardableResult
    public static func recordAttempt(messageId: String, memberInboxId: String, state: DBOutboxItem.State,
                                     nextAttemptAt: Int64, lastError: String?,
                                     on conn: SQLiteConnection) throws(OutgoingWriteError) -> Int64 {
        let changed = try store { () throws(StoreError) in
            try conn.run("""
                UPDATE outbox SET state = CASE WHEN state = 'delivered' THEN state ELSE ?1 END,
                    attempts = attempts + 1, nextAttemptAt = ?2,
                    lastError = CASE WHEN state = 'delivered' THEN NULL ELSE ?3 END
                WHERE messageId = ?4 AND memberInboxId = ?5
                """, [.text(state.rawValue), .integer(nextAttemptAt), .optional(lastError),
                      .text(messageId), .text(memberInboxId)])
        }
        guard changed == 1 else { throw .unknownMessage }
        return try store { () throws(StoreError) -> Int64 in
            try MessageDeliveryStatus.recompute(messageId: messageId, on: conn)
            let conversationId = try conn.queryOne("SELECT conversationId FROM message WHERE id = ?",
                                                   [.text(messageId)])?.string(0)
            return try ChangeLog.append(conn, kind: .messageStatusChanged, conversationId: conversationId,
                                        entityId: messageId)
        }
    }

    /// Sets a message's delivery status directly (e.g. failed when the conversation exploded).
    @discardableResult
    public static func setDeliveryStatus(_ status: DBMessage.DeliveryStatus, messageId: String,
                                         on conn: SQLiteConnection) throws(OutgoingWriteError) -> Int64 {
        let row = try store { () throws(StoreError) in
            try conn.queryOne("SELECT conversationId FROM message WHERE id = ? AND isOutgoing = 1",
                              [.text(messageId)])
        }
        guard let row else { throw .unknownMessage }
        return try store { () throws(StoreError) -> Int64 in
            try conn.run("UPDATE message SET deliveryStatus = ? WHERE id = ?",
                         [.text(status.rawValue), .text(messageId)])
            return try ChangeLog.append(conn, kind: .messageStatusChanged, conversationId: try row.string(0),
                                        entityId: messageId)
        }
    }

    static func store<T>(_ body: () throws(StoreError) -> T) throws(OutgoingWriteError) -> T {
        do { return try body() } catch { throw .store(error) }
    }
}
