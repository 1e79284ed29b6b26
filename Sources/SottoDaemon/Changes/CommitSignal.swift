import Synchronization

/// Tells the change feed that the daemon itself committed: ``DaemonDatabase`` fires it after
/// every successful write, so the daemon's own writes (an RPC's, the outbox's delivery
/// statuses, a join accepted while applying) reach the feed without waiting for a poll.
/// Firing must not block the writer: the action only starts a catch-up.
///
/// ```swift
/// database.commits.onCommit { feed.requestCatchUp() }
/// try await database.write { conn in … }   // → the action runs once, after the commit
/// ```
public final class CommitSignal: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    public init() {}

    /// Sets what runs after each commit (replacing any earlier action).
    public func onCommit(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = action }
    }

    func fire() {
        action.withLock { $0 }?()
    }
}
