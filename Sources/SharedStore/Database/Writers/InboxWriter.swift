/// Why an inbox or conversation could not be saved.
///
/// ```swift
/// catch InboxWriteError.clientIdMismatch { /* same inbox, another clientId: refuse */ }
/// ```
public enum InboxWriteError: StoreErrorConvertible, Equatable {
    /// The inboxId is already stored with a different clientId.
    case clientIdMismatch
    /// The clientId already routes to another inbox.
    case clientIdInUse
    case unknownInbox
    /// The conversation id or topic is already stored.
    case conversationExists
    case store(StoreError)

    public init(storeError: StoreError) { self = .store(storeError) }
    public var underlyingStoreError: StoreError? { if case .store(let error) = self { error } else { nil } }
}

/// A new conversation with its members, as the daemon creates it (create or join flow).
///
/// ```swift
/// let new = NewConversation(id: cid, inboxId: me, name: "Trip", creatorInboxId: me,
///                           state: .active, createdAt: now,
///                           members: [MemberEntry(inboxId: me, publicKey: pk, endpoint: ep,
///                                                 clientId: client, profileName: "Ann")])
/// ```
public struct NewConversation: Sendable, Equatable {
    public var id: String
    public var inboxId: String
    public var name: String?
    public var creatorInboxId: String
    public var state: DBConversation.State
    public var createdAt: Int64
    public var expiresAt: Int64?
    public var members: [MemberEntry]

    public init(id: String, inboxId: String, name: String?, creatorInboxId: String,
                state: DBConversation.State, createdAt: Int64, expiresAt: Int64? = nil,
                members: [MemberEntry]) {
        self.id = id
        self.inboxId = inboxId
        self.name = name
        self.creatorInboxId = creatorInboxId
        self.state = state
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.members = members
    }
}

/// Creates inboxes and conversations, and records activity. Each call runs inside the
/// caller's transaction (the daemon's write, or ``SQLiteConnection/immediateTransaction(_:)``).
///
/// ```swift
/// try conn.immediateTransaction { () throws(InboxWriteError) in
///     try InboxWriter.save(inboxId: id, clientId: client, now: now, on: conn)
///     try InboxWriter.createConversation(new, on: conn)
/// }
/// ```
public enum InboxWriter {
    /// Stores an inbox; saving the same pair again changes nothing.
    /// Returns the change_log seq, or nil when nothing was written.
    @discardableResult
    public static func save(inboxId: String, clientId: String, now: Int64,
                            on conn: SQLiteConnection) throws(InboxWriteError) -> Int64? {
        if let existing = try wrap({ () throws(StoreError) in try InboxRepository.find(inboxId: inboxId, on: conn) }) {
            guard existing.clientId == clientId else { throw .clientIdMismatch }
            return nil
        }
        if try wrap({ () throws(StoreError) in try InboxRepository.forClient(clientId: clientId, on: conn) }) != nil {
            throw .clientIdInUse
        }
        return try wrap { () throws(StoreError) -> Int64 in
            try conn.run("INSERT INTO inbox(inboxId, clientId, createdAt) VALUES (?, ?, ?)",
                         [.text(inboxId), .text(clientId), .integer(now)])
            return try ChangeLog.append(conn, kind: .inboxCreated, conversationId: nil, entityId: inboxId, now: now)
        }
    }

    /// Stores a conversation of an existing inbox, its local state and its members (the
    /// creator gets role `creator`). Returns the change_log seq.
    @discardableResult
    public static func createConversation(_ new: NewConversation,
                                          on conn: SQLiteConnection) throws(InboxWriteError) -> Int64 {
        guard let inbox = try wrap({ () throws(StoreError) in try InboxRepository.find(inboxId: new.inboxId, on: conn) }) else {
            throw .unknownInbox
        }
        let topic = DBConversation.topic(for: new.id)
        let clash = try wrap { () throws(StoreError) in
            try conn.queryOne("SELECT 1 FROM conversation WHERE id = ? OR topic = ?", [.text(new.id), .text(topic)])
        }
        guard clash == nil else { throw .conversationExists }
        return try wrap { () throws(StoreError) -> Int64 in
            try conn.run("""
                INSERT INTO conversation(id, inboxId, clientId, topic, name, creatorInboxId, createdAt, expiresAt, state)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(new.id), .text(new.inboxId), .text(inbox.clientId), .text(topic),
                      try conn.sealedCell(text: new.name, .conversationName, conversationId: new.id, rowId: new.id,
                                          inboxId: new.inboxId),
                      .text(new.creatorInboxId), .integer(new.createdAt),
                      .optional(new.expiresAt), .text(new.state.rawValue)])
            try conn.run("INSERT INTO conversation_local_state(conversationId) VALUES (?)", [.text(new.id)])
            try MemberList.replace(conversationId: new.id, creatorInboxId: new.creatorInboxId,
                                   with: new.members, on: conn)
            return try ChangeLog.append(conn, kind: .conversationCreated, conversationId: new.id,
                                        entityId: new.inboxId, now: new.createdAt)
        }
    }

    /// Sets `lastActivityAt` to `at` unless it is already later (clocks may step back).
    public static func touch(inboxId: String, at: Int64, on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("""
            UPDATE inbox SET lastActivityAt = max(coalesce(lastActivityAt, ?), ?) WHERE inboxId = ?
            """, [.integer(at), .integer(at), .text(inboxId)])
    }

    private static func wrap<T>(_ body: () throws(StoreError) -> T) throws(InboxWriteError) -> T {
        do { return try body() } catch { throw .store(error) }
    }
}

/// Replaces a conversation's `member` and `member_profile` rows (shared by conversation
/// creation and the membership message).
enum MemberList {
    static func replace(conversationId: String, creatorInboxId: String, with entries: [MemberEntry],
                        on conn: SQLiteConnection) throws(StoreError) {
        try conn.run("DELETE FROM member WHERE conversationId = ?", [.text(conversationId)])
        try conn.run("DELETE FROM member_profile WHERE conversationId = ?", [.text(conversationId)])
        try insert(conversationId: conversationId, creatorInboxId: creatorInboxId, entries, on: conn)
    }

    /// Adds (or overwrites) members' `member` and `member_profile` rows.
    static func insert(conversationId: String, creatorInboxId: String, _ entries: [MemberEntry],
                       on conn: SQLiteConnection) throws(StoreError) {
        let member = try conn.prepare("""
            INSERT OR REPLACE INTO member(conversationId, inboxId, publicKey, endpoint, clientId, role)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        let profile = try conn.prepare("""
            INSERT OR REPLACE INTO member_profile(conversationId, inboxId, name) VALUES (?, ?, ?)
            """)
        for entry in entries {
            let role: DBMember.Role = entry.inboxId == creatorInboxId ? .creator : .member
            try member.bind([.text(conversationId), .text(entry.inboxId), .text(entry.publicKey),
                             .text(entry.endpoint), .text(entry.clientId), .text(role.rawValue)])
            while try member.step() {}
            try profile.bind([.text(conversationId), .text(entry.inboxId),
                              try conn.sealedCell(text: entry.profileName, .memberProfileName,
                                                  conversationId: conversationId, rowId: entry.inboxId)])
            while try profile.step() {}
        }
    }
}
