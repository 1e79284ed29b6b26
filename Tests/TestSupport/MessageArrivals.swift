import ControlProtocol
import Foundation
import SharedStore
import SottoClient
import SottoWire

/// When each new message's `change` notification reached a `subscribe` client (what
/// `sotto watch` reads), in monotonic ns, collected on a thread of its own. The benchmarks
/// key it by what they know when they ask: a message id (`entityId`) or a unique text.
///
/// ```swift
/// let arrivals = try MessageArrivals(controlSocketPath: path) { $0.entityId }
/// let at = arrivals.arrival(of: messageId, timeoutSeconds: 10)   // nil past the deadline
/// ```
public final class MessageArrivals: @unchecked Sendable {
    private let client: ControlClient
    private let lock = NSCondition()
    private var arrivals: [String: UInt64] = [:]

    public init(controlSocketPath: String, conversationId: String? = nil,
                key: @escaping @Sendable (ChangeNotification) -> String?) throws {
        client = try ControlClient.connect(path: controlSocketPath)
        _ = try client.call(SubscribeParams(conversation: conversationId))
        let thread = Thread { [self] in
            for change in client.changes {
                let at = MonotonicClock.nowNs()
                guard change.kind == ChangeKind.messageInserted.rawValue, let key = key(change) else { continue }
                lock.lock()
                arrivals[key] = at
                lock.broadcast()
                lock.unlock()
            }
        }
        thread.start()
    }

    /// Waits on the condition until the change keyed `key` arrived, and takes it.
    public func arrival(of key: String, timeoutSeconds: Double) -> UInt64? {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while arrivals[key] == nil {
            if !lock.wait(until: deadline) { return nil }
        }
        return arrivals.removeValue(forKey: key)
    }
}
