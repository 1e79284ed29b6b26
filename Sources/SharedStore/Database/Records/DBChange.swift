/// What a `change_log` row says happened. Stored as its raw value.
public enum ChangeKind: String, Sendable, CaseIterable {
    case inboxCreated
    case inboxDeleted
    case inboxActivity
    case conversationCreated
    case conversationUpdated
    case conversationExpiresChanged
    case membersChanged
    case messageInserted
    case messageStatusChanged
    case joinRequestReceived
    case localStateChanged
    /// A member asked the creator's device for the full roster (`roster_request`) or to rename
    /// it (`roster_rename`); `entityId` is the member's inboxId.
    case rosterRequested
    /// The creator refused this device's join (`join_refusal`, docs/protocol/join-refusal.md);
    /// `entityId` is the join request's message id. The daemon deletes the pending join.
    case joinRefused
}

/// A row of `change_log`: one committed change, in commit order, for the daemon to catch up
/// on what the worker wrote (`seq` only grows).
///
/// ```swift
/// for change in try ChangeLogRepository.since(seq: lastSeen, limit: 100, on: conn) {
///     lastSeen = change.seq
/// }
/// ```
public struct DBChange: Sendable, Equatable {
    public var seq: Int64
    /// The raw kind; ``ChangeKind`` when this build knows it.
    public var kind: String
    public var conversationId: String?
    public var entityId: String?
    public var writerPid: Int64
    public var createdAt: Int64

    public var knownKind: ChangeKind? { ChangeKind(rawValue: kind) }

    package static let columns = "seq, kind, conversationId, entityId, writerPid, createdAt"

    package init(row: Row) throws(StoreError) {
        seq = try row.int64(0)
        kind = try row.string(1)
        conversationId = try row.optionalString(2)
        entityId = try row.optionalString(3)
        writerPid = try row.int64(4)
        createdAt = try row.int64(5)
    }
}
