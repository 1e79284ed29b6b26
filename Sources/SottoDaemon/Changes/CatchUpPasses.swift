/// The bookkeeping that makes the change feed's catch-ups single-flight: each call takes a
/// ticket; one caller runs passes while others wait; a waiter is resumed by the first pass
/// that *started* after it took its ticket, so its commit was visible to that pass's reads.
/// Not Sendable on purpose: it lives in ``ChangeFeed``.
///
/// ```swift
/// let ticket = passes.request()
/// guard passes.tryStart() else { await withCheckedContinuation { passes.wait(ticket: ticket, $0) }; return }
/// while let covering = passes.nextPass() { await drain(); passes.finish(covering) }
/// ```
struct CatchUpPasses {
    private var requested: UInt64 = 0
    private var finished: UInt64 = 0
    private var running = false
    private var waiters: [(ticket: UInt64, continuation: CheckedContinuation<Void, Never>)] = []

    var waitingCount: Int { waiters.count }

    /// A new ticket: satisfied once a pass started after this call has finished.
    mutating func request() -> UInt64 {
        requested += 1
        return requested
    }

    /// True when no pass is running: the caller now runs passes until `nextPass()` says stop.
    mutating func tryStart() -> Bool {
        if running { return false }
        running = true
        return true
    }

    mutating func wait(ticket: UInt64, _ continuation: CheckedContinuation<Void, Never>) {
        if finished >= ticket {
            continuation.resume()
        } else {
            waiters.append((ticket, continuation))
        }
    }

    /// The newest ticket the next pass covers, or nil (and the runner stops) when every
    /// ticket is covered.
    mutating func nextPass() -> UInt64? {
        if finished < requested { return requested }
        running = false
        return nil
    }

    mutating func finish(_ covering: UInt64) {
        finished = covering
        var waiting: [(ticket: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in waiters {
            if waiter.ticket <= finished { waiter.continuation.resume() } else { waiting.append(waiter) }
        }
        waiters = waiting
    }
}
