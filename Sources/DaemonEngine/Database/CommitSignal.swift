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
    /// The action in a struct, not a bare optional closure: copied out of a `Mutex` as
    /// `withLock { $0 }`, a bare closure was wrapped in two reabstraction thunks that were
    /// stored back, so every commit nested the action two calls deeper and kept ~250 bytes
    /// (debug and release builds alike; the soak's steady growth, docs/adr/0059).
    private struct Action: Sendable {
        let run: @Sendable () -> Void
    }

    private let action = Mutex<Action?>(nil)

    public init() {}

    /// Sets what runs after each commit (replacing any earlier action).
    public func onCommit(_ action: @escaping @Sendable () -> Void) {
        self.action.withLock { $0 = Action(run: action) }
    }

    func fire() {
        action.withLock { $0 }?.run()
    }
}
