/// The bookkeeping that makes the change feed's catch-ups single-flight: one caller runs
/// passes while the others wait. A waiter needs the feed to reach `target` (the newest seq
/// committed when it asked): it is resumed as soon as the feed is there, or, at the latest,
/// when a pass that *started* after it asked has finished (a target that does not exist, such
/// as a forged datagram's, then ends the wait too). Not Sendable on purpose: it lives in
/// ``ChangeFeed``.
///
/// ```swift
/// let ticket = passes.request()
/// guard passes.tryStart() else { await withCheckedContinuation { passes.wait(ticket: ticket, target: seq, $0) }; return }
/// while let covering = passes.nextPass() { await drain(); passes.finish(covering, reached: lastSeq) }
/// ```
struct CatchUpPasses {
    private struct Waiter {
        let ticket: UInt64
        let target: Int64
        let continuation: CheckedContinuation<Void, Never>
    }

    private var requested: UInt64 = 0
    private var finished: UInt64 = 0
    private var running = false
    private var waiters: [Waiter] = []

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

    mutating func wait(ticket: UInt64, target: Int64, _ continuation: CheckedContinuation<Void, Never>) {
        if finished >= ticket {
            continuation.resume()
        } else {
            waiters.append(Waiter(ticket: ticket, target: target, continuation: continuation))
        }
    }

    /// The newest ticket the next pass covers, or nil (and the runner stops) when every
    /// ticket is covered.
    mutating func nextPass() -> UInt64? {
        if finished < requested { return requested }
        running = false
        return nil
    }

    /// The feed applied and told everything up to `seq`: waiters that needed no more go on.
    mutating func reached(_ seq: Int64) {
        resumeWaiters { $0.target <= seq }
    }

    mutating func finish(_ covering: UInt64, reached seq: Int64) {
        finished = covering
        resumeWaiters { $0.ticket <= covering || $0.target <= seq }
    }

    private mutating func resumeWaiters(where satisfied: (Waiter) -> Bool) {
        guard waiters.contains(where: satisfied) else { return }
        var waiting: [Waiter] = []
        for waiter in waiters {
            if satisfied(waiter) { waiter.continuation.resume() } else { waiting.append(waiter) }
        }
        waiters = waiting
    }
}
