import Synchronization

/// What the control socket holds and has refused, for `sotto status` (`control`) and tests.
///
/// ```swift
/// let stats = ControlStats()
/// stats.current.connections   // open control connections now
/// ```
final class ControlStats: Sendable {
    struct Figures: Sendable, Equatable {
        var connections = 0
        var maxConnections = 0
        var bufferedBytes = 0
        var refused = 0
        var evicted = 0
        var fileLimitHits = 0
    }

    private let figures = Mutex(Figures())

    func update(_ change: (inout Figures) -> Void) {
        figures.withLock { change(&$0) }
    }

    var current: Figures { figures.withLock { $0 } }
}
