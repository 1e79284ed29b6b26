import SottoCrypto
import SottoWire

/// Applies versioned roster messages (docs/protocol/roster.md §5) to a conversation's member
/// rows, inside the caller's transaction. A conversation's roster is at `rosterVersion`; a
/// delta from `base` applies when `base == rosterVersion`, waits in `roster_pending` when it
/// is ahead, and changes nothing when it is behind (already applied or superseded). A full
/// roster with a version replaces the rows when it is newer. After each applied change the
/// waiting deltas that now follow are applied in version order. Departures (a leave, a
/// removal) are final: a departed inboxId is never added back, so they commute with deltas.
///
/// ```swift
/// let plan = try RosterWriter.plan(delta, conversation: conversation, on: conn)   // checks only
/// try RosterWriter.perform(plan, messageId: m.id, content: m.content, now: now, conversation: conversation, on: conn)
/// ```
public enum RosterWriter {
    /// A delta further ahead of the roster than this is refused: the creator sends the full
    /// roster every `RosterWriter.fullRosterEvery` versions, so a healthy gap is far shorter.
    public static let maxVersionsAhead: Int64 = 256
    /// The creator sends the whole roster instead of a delta when the new version is a
    /// multiple of this (docs/adr/0042): a gap that never fills heals at the next one.
    public static let fullRosterEvery: Int64 = 128

    public struct Delta: Sendable, Equatable {
        public var base: Int64
        public var added: [MemberEntry]
        public var removed: [String]
        public var renamed: [RosterDelta.Rename]

        public init(base: Int64, added: [MemberEntry], removed: [String], renamed: [RosterDelta.Rename]) {
            self.base = base
            self.added = added
            self.removed = removed
            self.renamed = renamed
        }
    }

    /// What a delta will do, decided before anything is written.
    public enum Plan: Sendable, Equatable {
        case apply(Delta)
        /// Ahead of the roster: kept until its predecessor (or a newer full roster) arrives.
        case keep(base: Int64)
        /// Behind the roster: already applied, or superseded by a full roster.
        case stale
    }

    /// The checks (read only). Refusals are `invalidContent` (acked `malformed_message`).
    public static func plan(_ delta: Delta, conversation: DBConversation,
                            on conn: SQLiteConnection) throws(IncomingWriteError) -> Plan {
        let current = try wrap { () throws(StoreError) in try version(of: conversation.id, on: conn) }
        if delta.base < current { return .stale }
        if delta.base > current {
            guard delta.base - current <= maxVersionsAhead else {
                throw .invalidContent("a roster change \(delta.base - current) versions ahead of this device's roster")
            }
            return .keep(base: delta.base)
        }
        if let reason = try wrap({ () throws(StoreError) in try check(delta, conversation: conversation, on: conn) }) {
            throw .invalidContent(reason)
        }
        return .apply(delta)
    }

    /// The effects of a plan, then every waiting delta that now follows.
    public static func perform(_ plan: Plan, messageId: String, content: [UInt8], now: Int64,
                               conversation: DBConversation, on conn: SQLiteConnection) throws(StoreError) {
        switch plan {
        case .stale:
            return
        case .keep(let base):
            try conn.run("""
                INSERT OR IGNORE INTO roster_pending(conversationId, base, messageId, content, receivedAt)
                VALUES (?, ?, ?, ?, ?)
                """, [.text(conversation.id), .integer(base), .text(messageId),
                      try conn.sealedCell(content, .rosterPendingContent, conversationId: conversation.id, rowId: messageId),
                      .integer(now)])
        case .apply(let delta):
            try apply(delta, conversation: conversation, on: conn)
            try drain(conversation: conversation, on: conn)
        }
    }

    /// A full roster: replaces the rows when `version` is newer than the roster's (always
    /// when nil, a version-1 creator's list). Returns false when it was stale.
    @discardableResult
    public static func replace(with members: [MemberEntry], version: Int64?, conversation: DBConversation,
                               on conn: SQLiteConnection) throws(StoreError) -> Bool {
        if let version, version <= (try self.version(of: conversation.id, on: conn)) { return false }
        let departed = try departed(of: conversation.id, on: conn)
        try MemberList.replace(conversationId: conversation.id, creatorInboxId: conversation.creatorInboxId,
                           with: members.filter { !departed.contains($0.inboxId) }, on: conn)
        if let version {
            try conn.run("UPDATE conversation SET rosterVersion = ? WHERE id = ?", [.integer(version), .text(conversation.id)])
            try conn.run("DELETE FROM roster_pending WHERE conversationId = ? AND base < ?",
                         [.text(conversation.id), .integer(version)])
            try drain(conversation: conversation, on: conn)
        }
        return true
    }

    /// A member left or was removed: its rows go and it is never added back here.
    public static func depart(inboxId: String, conversationId: String, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("DELETE FROM member WHERE conversationId = ? AND inboxId = ?", [.text(conversationId), .text(inboxId)])
        try conn.run("DELETE FROM member_profile WHERE conversationId = ? AND inboxId = ?",
                     [.text(conversationId), .text(inboxId)])
        try conn.run("INSERT OR IGNORE INTO roster_departed(conversationId, inboxId) VALUES (?, ?)",
                     [.text(conversationId), .text(inboxId)])
    }

    /// The creator's side: raises the conversation's roster version by one (docs/protocol/roster.md
    /// §6) and returns the new version, in the caller's transaction.
    public static func nextVersion(of conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        let next = try version(of: conversationId, on: conn) + 1
        try conn.run("UPDATE conversation SET rosterVersion = ? WHERE id = ?", [.integer(next), .text(conversationId)])
        return next
    }

    public static func version(of conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Int64 {
        try conn.queryOne("SELECT rosterVersion FROM conversation WHERE id = ?", [.text(conversationId)])?.int64(0) ?? 0
    }

    // MARK: - Helpers

    /// Why `delta` cannot apply to the roster as it is now, or nil.
    static func check(_ delta: Delta, conversation: DBConversation, on conn: SQLiteConnection) throws(StoreError) -> String? {
        let members = Set(try MemberRepository.members(of: conversation.id, on: conn).map(\.inboxId))
        let departed = try departed(of: conversation.id, on: conn)
        if delta.removed.contains(conversation.creatorInboxId) { return "a roster change may not remove the creator" }
        for inboxId in delta.removed where !members.contains(inboxId) && !departed.contains(inboxId) {
            return "a roster change removes \(inboxId.prefix(12)), who is not a member"
        }
        for entry in delta.added where members.contains(entry.inboxId) {
            return "a roster change adds \(entry.inboxId.prefix(12)), who is already a member"
        }
        for rename in delta.renamed where !members.contains(rename.inboxId) && !departed.contains(rename.inboxId) {
            return "a roster change renames \(rename.inboxId.prefix(12)), who is not a member"
        }
        let added = delta.added.filter { !departed.contains($0.inboxId) }.count
        let removed = delta.removed.filter { members.contains($0) }.count
        if members.count + added - removed > ContentLimits.maxMembers {
            return "a roster change would make \(members.count + added - removed) members, over \(ContentLimits.maxMembers)"
        }
        return nil
    }

    private static func apply(_ delta: Delta, conversation: DBConversation, on conn: SQLiteConnection) throws(StoreError) {
        let departed = try departed(of: conversation.id, on: conn)
        for inboxId in delta.removed { try depart(inboxId: inboxId, conversationId: conversation.id, on: conn) }
        try MemberList.insert(conversationId: conversation.id, creatorInboxId: conversation.creatorInboxId,
                              delta.added.filter { !departed.contains($0.inboxId) }, on: conn)
        for rename in delta.renamed where !departed.contains(rename.inboxId) {
            try conn.run("INSERT OR REPLACE INTO member_profile(conversationId, inboxId, name) VALUES (?, ?, ?)",
                         [.text(conversation.id), .text(rename.inboxId),
                          try conn.sealedCell(text: rename.profileName, .memberProfileName,
                                              conversationId: conversation.id, rowId: rename.inboxId)])
        }
        try conn.run("UPDATE conversation SET rosterVersion = ? WHERE id = ?", [.integer(delta.base + 1), .text(conversation.id)])
    }

    /// Applies the waiting deltas that follow the roster's version, in order. One that no
    /// longer fits the roster is dropped with the ones after it kept (a later full roster heals).
    private static func drain(conversation: DBConversation, on conn: SQLiteConnection) throws(StoreError) {
        while true {
            let current = try version(of: conversation.id, on: conn)
            try conn.run("DELETE FROM roster_pending WHERE conversationId = ? AND base < ?",
                         [.text(conversation.id), .integer(current)])
            guard let row = try conn.queryOne("SELECT content, messageId FROM roster_pending WHERE conversationId = ? AND base = ?",
                                              [.text(conversation.id), .integer(current)]) else { return }
            try conn.run("DELETE FROM roster_pending WHERE conversationId = ? AND base = ?",
                         [.text(conversation.id), .integer(current)])
            guard let content = try conn.openedCell(row.values[0], .rosterPendingContent, conversationId: conversation.id,
                                                    rowId: try row.string(1)).bytes,
                  case .rosterDelta(let parsed)? = try? MessageContent.decode(
                    contentType: ContentType.rosterDelta, content: content, fallback: nil) else { return }
            let delta = Delta(parsed)
            guard try check(delta, conversation: conversation, on: conn) == nil else { return }
            try apply(delta, conversation: conversation, on: conn)
        }
    }

    private static func departed(of conversationId: String, on conn: SQLiteConnection) throws(StoreError) -> Set<String> {
        Set(try conn.query("SELECT inboxId FROM roster_departed WHERE conversationId = ?", [.text(conversationId)])
            .map { row throws(StoreError) in try row.string(0) })
    }

    private static func wrap<T>(_ body: () throws(StoreError) -> T) throws(IncomingWriteError) -> T {
        do { return try body() } catch { throw .store(error) }
    }
}

extension RosterWriter.Delta {
    public init(_ delta: RosterDelta) {
        self.init(base: delta.base, added: delta.added.map(MemberEntry.init), removed: delta.removed, renamed: delta.renamed)
    }
}
