import Synchronization

/// What the control socket holds and has refused, for `sotto status` (`control`) and tests.
///
/// ```swift
/// let stats = ControlStats()
/// stats.current.connections   // open control connections now
/// ```
public final class ControlStats: Sendable {
    public struct Figures: Sendable, Equatable {
        public var connections = 0
        public var maxConnections = 0
        public var bufferedBytes = 0
        public var refused = 0
        public var evicted = 0
        public var fileLimitHits = 0
    }

    private let figures = Mutex(Figures())

    public init() {}

    func update(_ change: (inout Figures) -> Void) {
        figures.withLock { change(&$0) }
    }

    public var current: Figures { figures.withLock { $0 } }
}
