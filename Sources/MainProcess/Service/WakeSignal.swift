import SharedStore

/// What a background worker sleeps on between passes: woken at once by `wake()`, or when its
/// next deadline comes, whichever is first; wakes that arrive while it works coalesce into
/// one. The outbox sender and the expired-conversations worker each own one.
///
/// ```swift
/// let signal = WakeSignal()
/// while running {
///     let next = await pass()                       // the next deadline, Unix ms, if any
///     await signal.sleep(until: next, atMostMs: 60_000)
/// }
/// // elsewhere: signal.wake()
/// ```
final class WakeSignal: @unchecked Sendable {
    private let continuation: AsyncStream<Void>.Continuation
    /// Only the worker's own loop calls `sleep`, one call at a time, so the iterator is never
    /// used concurrently (the reason this class may be `@unchecked Sendable`).
    private var iterator: AsyncStream<Void>.Iterator

    init() {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.continuation = continuation
        self.iterator = stream.makeAsyncIterator()
    }

    func wake() { continuation.yield() }

    /// Ends every current and future sleep at once.
    func finish() { continuation.finish() }

    /// Sleeps until woken or until `deadlineMs` (Unix ms), at most `atMostMs` and at least
    /// `atLeastMs` from now.
    func sleep(until deadlineMs: Int64?, atMostMs: Int64, atLeastMs: Int64 = 0) async {
        let waitMs = deadlineMs.map { max(atLeastMs, min($0 - WallClock.nowMs(), atMostMs)) } ?? atMostMs
        let continuation = self.continuation
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(waitMs))
            continuation.yield()
        }
        _ = await iterator.next()
        timer.cancel()
    }
}
