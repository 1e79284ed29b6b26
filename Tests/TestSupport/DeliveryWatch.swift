import ControlProtocol
import Foundation
import SharedStore
import SottoClient
import SottoWire

/// Waits, in a benchmark, until every push of a message has reached a state (`sent`, or
/// `relayed`), woken by the daemon's status changes on a `subscribe` connection (no polling):
/// records the monotonic time it first saw them all there.
///
/// ```swift
/// let watch = try DeliveryWatch(controlSocketPath: home.controlSocketPath, databasePath: home.databasePath,
///                               state: "relayed")
/// let id = try control.call(SendMessageParams(conversation: c, text: "hi")).messageId
/// let at = watch.wait(for: id, pushes: 1_000)   // MonotonicClock.nowNs() when all were relayed
/// ```
public final class DeliveryWatch: @unchecked Sendable {
    private let client: ControlClient
    private let database: SQLiteConnection
    private let state: String
    private let lock = NSCondition()
    private var done: [String: UInt64] = [:]
    private var expected: [String: Int] = [:]

    public init(controlSocketPath: String, databasePath: String, state: String) throws {
        client = try ControlClient.connect(path: controlSocketPath)
        database = try SQLiteConnection.open(path: databasePath, profile: .worker)
        self.state = state
        _ = try client.call(SubscribeParams())
        Thread { [self] in
            for change in client.changes where change.kind == ChangeKind.messageStatusChanged.rawValue {
                guard let id = change.entityId else { continue }
                check(id)
            }
        }.start()
    }

    /// Called from the feed's thread and from `wait`: the connection is used under the lock.
    private func check(_ id: String) {
        lock.lock()
        defer { lock.unlock() }
        guard done[id] == nil, let wanted = expected[id],
              let count = try? database.queryOne("SELECT count(*) FROM outbox WHERE messageId = ? AND state = ?",
                                                 [.text(id), .text(state)])?.int64(0) else { return }
        let at = MonotonicClock.nowNs()
        guard Int(count) >= wanted else { return }
        done[id] = at
        lock.broadcast()
    }

    /// The time all `pushes` of `id` were first seen in the state; nil after `timeoutSeconds`.
    public func wait(for id: String, pushes: Int, timeoutSeconds: Double = 120) -> UInt64? {
        lock.withLock { expected[id] = pushes }
        check(id)  // the last change may have come before this call
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while done[id] == nil {
            if !lock.wait(until: deadline) { return nil }
        }
        return done[id]
    }
}
