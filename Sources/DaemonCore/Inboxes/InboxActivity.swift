/// One inbox and when it was last active, as ranked by the database's activity index.
///
/// ```swift
/// let ranked = [InboxActivity(inboxId: "a", lastActivityMs: 1_700_000_000_000)]
/// ```
public struct InboxActivity: Sendable, Hashable, Codable {
    public var inboxId: String
    /// Unix milliseconds of the latest message or action in this inbox.
    public var lastActivityMs: Int64

    public init(inboxId: String, lastActivityMs: Int64) {
        self.inboxId = inboxId
        self.lastActivityMs = lastActivityMs
    }
}

/// Where the inbox LRU gets the activity ranking from (the store's index on last activity).
/// Implementations return the most active inboxes first, at most `limit` of them.
///
/// ```swift
/// struct FixedRanking: InboxActivitySource {
///     let ranked: [InboxActivity]
///     func rankedInboxes(limit: Int) async throws -> [InboxActivity] { Array(ranked.prefix(limit)) }
/// }
/// ```
public protocol InboxActivitySource: Sendable {
    func rankedInboxes(limit: Int) async throws -> [InboxActivity]
}
