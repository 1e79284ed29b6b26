import SottoWire

/// Stores one verified incoming message, after checking, in order: the conversation belongs to
/// the recipient inbox and matches the topic; it has not exploded (nor, for an explode
/// decision, had it when the creator made it); the sender may send this
/// content here (`SenderRules`: a member with that exact key; explode_settings and
/// membership only from the creator; join requests from anyone, to the creator only); the id
/// is new (else `.duplicate`, nothing written). Runs in the caller's one transaction; every
/// refusal throws before anything is written.
///
/// ```swift
/// let outcome = try conn.immediateTransaction { () throws(IncomingWriteError) in
///     try IncomingMessageWriter.write(message, recipientInboxId: inbox.inboxId,
///                                     topic: payload.topic, now: WallClock.nowMs(), on: conn)
/// }
/// ```
public enum IncomingMessageWriter {
    public static func write(_ m: IncomingMessage, recipientInboxId: String, topic: String,
                             now: Int64, on conn: SQLiteConnection) throws(IncomingWriteError) -> IncomingWriteOutcome {
        // MARK: Checks (read only)
        guard let conversation = try store({ () throws(StoreError) in
            try ConversationRepository.find(id: m.conversationId, on: conn)
        }), conversation.inboxId == recipientInboxId, conversation.topic == topic else {
            throw .unknownConversation
        }
        if let expiresAt = conversation.expiresAt, expiresAt <= now {
            throw .conversationExpired
        }
        try SenderRules.check(m, conversation: conversation, recipientInboxId: recipientInboxId, on: conn)
        // The race with the expiry (docs/protocol/explode-schedule.md §4): a decision the creator
        // made (its signed clock) at or after the explosion in force here comes too late,
        // however early it arrives: exploded stays exploded on every device.
        if case .explodeSettings = m.kind, let expiresAt = conversation.expiresAt, m.sentAtMs >= expiresAt {
            throw .conversationExpired
        }
        if case .receipt(let receipt) = m.kind {
            // Applied to the outbox, never stored as a message: applying it again changes
            // nothing, so it needs no duplicate check (docs/protocol/receipts.md §5).
            let seq = try ReceiptWriter.apply(receipt, conversationId: m.conversationId, signerInboxId: m.senderInboxId,
                                              now: now, on: conn)
            return .written(try store { () throws(StoreError) in
                try self.receipt(seq: seq, conversationId: m.conversationId, senderInboxId: m.senderInboxId,
                                 visible: false, on: conn)
            })
        }
        if case .rosterRequest(let version) = m.kind {
            // Recorded for the daemon, never stored as a message: one row per member, so a
            // flood or a replay rewrites that row and nothing grows (docs/protocol/roster.md §9).
            return .written(try store { () throws(StoreError) in
                let seq = try RosterRequestWriter.record(conversationId: m.conversationId, inboxId: m.senderInboxId,
                                                         version: version, now: now, on: conn)
                return try self.receipt(seq: seq, conversationId: m.conversationId, senderInboxId: m.senderInboxId,
                                   visible: false, on: conn)
            })
        }
        if case .rename(let name) = m.kind {
            // As a roster request: one row per member, the latest name wins.
            return .written(try store { () throws(StoreError) in
                let seq = try RosterRequestWriter.recordRename(conversationId: m.conversationId, inboxId: m.senderInboxId,
                                                               profileName: name, now: now, on: conn)
                return try self.receipt(seq: seq, conversationId: m.conversationId, senderInboxId: m.senderInboxId,
                                        visible: false, on: conn)
            })
        }
        if case .joinRefused(let joinRequestId, let reason) = m.kind {
            // Recorded, never stored as a message; the daemon then deletes the pending join
            // (docs/protocol/join-refusal.md §5). Visible: the user is told by a notification.
            switch try JoinRefusalWriter.record(conversation: conversation, recipientInboxId: recipientInboxId,
                                                joinRequestId: joinRequestId, reason: reason, now: now, on: conn) {
            case .duplicate: return .duplicate
            case .recorded(let seq):
                return .written(try store { () throws(StoreError) in
                    try self.receipt(seq: seq, conversationId: m.conversationId, senderInboxId: m.senderInboxId,
                                     visible: true, on: conn)
                })
            }
        }
        let seen = try store { () throws(StoreError) in
            try conn.queryOne("""
                SELECT 1 FROM message WHERE id = ?1
                UNION ALL SELECT 1 FROM join_request WHERE messageId = ?1 LIMIT 1
                """, [.text(m.id)])
        }
        if seen != nil { return .duplicate }
        var rosterPlan: RosterWriter.Plan?
        if case .rosterDelta(let base, let added, let removed, let renamed) = m.kind {
            rosterPlan = try RosterWriter.plan(.init(base: base, added: added, removed: removed, renamed: renamed),
                                               conversation: conversation, on: conn)
        }

        // MARK: Effects
        return try store { () throws(StoreError) -> IncomingWriteOutcome in
            let seq: Int64
            var visible = false
            var superseded = false
            switch m.kind {
            case .stored(let referenceId):
                try insertMessage(m, referenceId: referenceId, now: now, on: conn)
                try conn.run("""
                    UPDATE conversation_local_state SET unreadCount = unreadCount + 1 WHERE conversationId = ?
                    """, [.text(m.conversationId)])
                seq = try ChangeLog.append(conn, kind: .messageInserted, conversationId: m.conversationId,
                                           entityId: m.id, now: now)
                visible = true

            case .explodeSettings(let schedule):
                // Stored whatever its sequence (a late, older decision is a timeline row and a
                // dedupe key); the decision in force over all of them sets expiresAt, so any
                // order of arrival ends in the same state (docs/protocol/explode-schedule.md §3).
                try insertMessage(m, referenceId: nil, now: now, on: conn)
                let applied = try ExplodeScheduleWriter.apply(conversationId: m.conversationId,
                                                              creatorInboxId: conversation.creatorInboxId,
                                                              messageId: m.id, now: now, on: conn)
                seq = applied.seq
                superseded = applied.schedule != schedule

            case .joinRequest(let inviteId, let secret, let profileName, let endpoint, let clientId):
                try conn.run("""
                    INSERT INTO join_request(conversationId, inviteId, secret, requesterInboxId,
                        requesterPublicKey, profileName, endpoint, clientId, messageId, receivedAt, state)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')
                    """, [.text(m.conversationId), .text(inviteId), .text(secret), .text(m.senderInboxId),
                          .text(m.senderPublicKey),
                          try conn.sealedCell(text: profileName, .joinRequestProfileName,
                                              conversationId: m.conversationId, rowId: m.id),
                          .text(endpoint),
                          .text(clientId), .text(m.id), .integer(now)])
                seq = try ChangeLog.append(conn, kind: .joinRequestReceived, conversationId: m.conversationId,
                                           entityId: m.id, now: now)

            case .leave:
                // The signer leaves (docs/protocol/leave-remove.md): its member row and profile
                // go, so nothing it sends later is accepted. Stored as a timeline row too, so a
                // replayed leave is a duplicate, and the creator's daemon sees it.
                try insertMessage(m, referenceId: nil, now: now, on: conn)
                try RosterWriter.depart(inboxId: m.senderInboxId, conversationId: m.conversationId, on: conn)
                seq = try ChangeLog.append(conn, kind: .membersChanged, conversationId: m.conversationId,
                                           entityId: m.id, now: now)

            case .remove(let inboxId) where inboxId == recipientInboxId:
                // This device is removed (docs/protocol/leave-remove.md §6): the conversation
                // ends here now, as an explode does; the creator's remove backs the time.
                try insertMessage(m, referenceId: nil, now: now, on: conn)
                try conn.run("UPDATE conversation SET expiresAt = min(coalesce(expiresAt, ?1), ?1) WHERE id = ?2",
                             [.integer(now), .text(m.conversationId)])
                seq = try ChangeLog.append(conn, kind: .conversationExpiresChanged,
                                           conversationId: m.conversationId, entityId: m.id, now: now)

            case .remove(let inboxId):
                // Another member is removed: its rows go, so nothing it sends later is accepted.
                try insertMessage(m, referenceId: nil, now: now, on: conn)
                try RosterWriter.depart(inboxId: inboxId, conversationId: m.conversationId, on: conn)
                seq = try ChangeLog.append(conn, kind: .membersChanged, conversationId: m.conversationId,
                                           entityId: m.id, now: now)

            case .receipt, .rosterRequest, .rename, .joinRefused:
                preconditionFailure("a receipt, a roster request and a join refusal are applied above")

            case .membership(let name, let members, let version):
                // Stored as a timeline row too, so a replayed membership is a duplicate. One
                // older than the roster here changes nothing (docs/protocol/roster.md §5).
                try insertMessage(m, referenceId: nil, now: now, on: conn)
                if try RosterWriter.replace(with: members, version: version, conversation: conversation, on: conn) {
                    try conn.run("""
                        UPDATE conversation SET name = coalesce(?, name), state = 'active' WHERE id = ?
                        """, [try conn.sealedCell(text: name, .conversationName, conversationId: m.conversationId,
                                                  rowId: m.conversationId),
                              .text(m.conversationId)])
                }
                seq = try ChangeLog.append(conn, kind: .membersChanged, conversationId: m.conversationId,
                                           entityId: m.id, now: now)

            case .rosterDelta:
                // Stored as a timeline row too, so a replayed delta is a duplicate.
                try insertMessage(m, referenceId: nil, now: now, on: conn)
                if let rosterPlan {
                    try RosterWriter.perform(rosterPlan, messageId: m.id, content: m.content, now: now,
                                             conversation: conversation, on: conn)
                }
                seq = try ChangeLog.append(conn, kind: .membersChanged, conversationId: m.conversationId,
                                           entityId: m.id, now: now)
            }
            if m.senderInboxId != recipientInboxId, Self.owesReceipt(m.kind, recipientInboxId: recipientInboxId) {
                try ReceiptWriter.recordDue(messageId: m.id, conversationId: m.conversationId, senderInboxId: m.senderInboxId,
                                            error: nil, now: now, on: conn)
            }
            try InboxWriter.touch(inboxId: recipientInboxId, at: now, on: conn)
            var written = try receipt(seq: seq, conversationId: m.conversationId,
                                      senderInboxId: m.senderInboxId, visible: visible, on: conn)
            written.isSupersededDecision = superseded
            return .written(written)
        }
    }

    // MARK: Helpers

    /// Whether the sender of a stored message of this kind is owed a receipt
    /// (docs/protocol/receipts.md §4): not for a join request (its sender is no member yet), a
    /// leave (its sender deleted the conversation), an explode or a removal of this device (the
    /// conversation ends here), nor a receipt.
    static func owesReceipt(_ kind: IncomingMessage.Kind, recipientInboxId: String) -> Bool {
        switch kind {
        case .stored, .membership, .rosterDelta: return true
        case .remove(let inboxId): return inboxId != recipientInboxId
        case .explodeSettings, .joinRequest, .leave, .receipt, .rosterRequest, .rename, .joinRefused: return false
        }
    }

    private static func insertMessage(_ m: IncomingMessage, referenceId: String?, now: Int64,
                                      on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType,
                content, fallback, referenceId, isOutgoing, deliveryStatus)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)
            """, [.text(m.id), .text(m.conversationId), .text(m.senderInboxId), .integer(m.sentAtMs),
                  .integer(now), .text(m.contentType),
                  try conn.sealedCell(m.content, .messageContent, conversationId: m.conversationId, rowId: m.id),
                  try conn.sealedCell(text: m.fallback, .messageFallback, conversationId: m.conversationId, rowId: m.id),
                  .optional(referenceId)])
    }

    private static func receipt(seq: Int64, conversationId: String, senderInboxId: String, visible: Bool,
                                on conn: SQLiteConnection) throws(StoreError) -> IncomingWriteReceipt {
        let row = try conn.queryOne("""
            SELECT c.name, coalesce(s.muted, 0), coalesce(s.isOpen, 0), coalesce(s.unreadCount, 0),
                   (SELECT name FROM member_profile WHERE conversationId = c.id AND inboxId = ?),
                   coalesce(s.notificationPreview, (SELECT value FROM device_setting WHERE key = ?))
            FROM conversation c LEFT JOIN conversation_local_state s ON s.conversationId = c.id
            WHERE c.id = ?
            """, [.text(senderInboxId), .text(NotificationPreview.settingKey), .text(conversationId)])
        guard let row else { throw .sqlite(code: SQLiteResultCode.error, message: "conversation vanished during write") }
        return IncomingWriteReceipt(
            seq: seq, conversationId: conversationId,
            conversationName: try conn.openedText(row.values[0], .conversationName, conversationId: conversationId,
                                                  rowId: conversationId),
            senderInboxId: senderInboxId,
            senderProfileName: try conn.openedText(row.values[4], .memberProfileName, conversationId: conversationId,
                                                   rowId: senderInboxId),
            muted: try row.bool(1),
            isOpen: try row.bool(2), unreadCount: try row.int64(3), isUserVisible: visible,
            preview: try row.optionalString(5).flatMap(NotificationPreview.init(rawValue:)) ?? .deviceDefault)
    }

    private static func store<T>(_ body: () throws(StoreError) -> T) throws(IncomingWriteError) -> T {
        do { return try body() } catch { throw .store(error) }
    }
}
