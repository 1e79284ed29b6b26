/// A first-in first-out lock for use inside one actor: operations that await resource
/// activation hold it, so a later operation cannot interleave with an earlier one's effects
/// (actors are reentrant at every `await`). Not Sendable on purpose: it lives in an actor.
///
/// ```swift
/// await gate.acquire()
/// defer { gate.release() }
/// ```
struct AsyncGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var nextWaiter = 0

    /// Takes the gate if it is free; false means the caller must `enqueue` and wait.
    mutating func tryAcquire() -> Bool {
        if busy { return false }
        busy = true
        return true
    }

    mutating func enqueue(_ waiter: CheckedContinuation<Void, Never>) {
        waiters.append(waiter)
    }

    /// Hands the gate to the next waiter (which then holds it) or frees it.
    mutating func release() {
        if nextWaiter < waiters.count {
            let waiter = waiters[nextWaiter]
            nextWaiter += 1
            if nextWaiter == waiters.count {
                waiters.removeAll(keepingCapacity: true)
                nextWaiter = 0
            }
            waiter.resume()
        } else {
            busy = false
        }
    }
}
