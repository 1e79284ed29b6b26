/// Changes a replay could not read (a damaged database page): told to the subscriber that
/// asked for the replay, never skipped in silence. The engine's value; on the control socket
/// it is the `subscribe` result's `ChangeGap`.
///
/// ```swift
/// let (lastSeq, gap, changes) = await feed.subscribe(key: key, since: 120, conversationId: nil)
/// if let gap { log("changes after #\(gap.afterSeq) cannot be read: \(gap.reason); \(gap.remedy)") }
/// ```
public struct FeedGap: Sendable, Equatable {
    /// The last change delivered before the gap.
    public let afterSeq: Int64
    /// The first change delivered after it; nil when nothing after it could be read.
    public let resumedAtSeq: Int64?
    /// Why those changes cannot be read.
    public let reason: String
    /// What to do about it.
    public let remedy: String
}
