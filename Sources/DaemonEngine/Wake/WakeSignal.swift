import ServiceLifecycle
import SottoWire
import Synchronization

/// What a background worker sleeps on between passes: woken at once by `wake()`, or when its
/// next deadline comes, whichever is first; wakes that arrive while it works coalesce into
/// one. The outbox sender and the explode worker each own one.
///
/// Only `wake()` leaves a wake pending for the next sleep. A deadline ends the one sleep it
/// was set for and nothing else: each sleep has a serial number, and a timer that fires
/// after its sleep already ended finds another serial and does nothing. (The first version
/// let a cancelled timer's wake leak into the next sleep, which then returned at once, and
/// so on forever: a core spun and memory grew after the first send, issue #10.)
///
/// ```swift
/// let signal = WakeSignal()
/// while running {
///     let next = await pass()                       // the next deadline, Unix ms, if any
///     await signal.sleep(until: next, atMostMs: 60_000)
/// }
/// // elsewhere: signal.wake()
/// ```
public final class WakeSignal: Sendable {
    private struct State {
        var wakePending = false
        var finished = false
        var serial: UInt64 = 0
        var sleeper: CheckedContinuation<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Ends the current sleep, or the next one if none is running.
    func wake() {
        endSleep { state in
            if state.sleeper == nil { state.wakePending = true }
        }
    }

    /// Ends every current and future sleep at once.
    public func finish() {
        endSleep { state in state.finished = true }
    }

    /// Sleeps until woken or until `deadlineMs` (Unix ms), at most `atMostMs` and at least
    /// `atLeastMs` from now. Returns at once after `finish()`, and when the calling task is
    /// cancelled.
    public func sleep(until deadlineMs: Int64?, atMostMs: Int64, atLeastMs: Int64 = 0) async {
        let waitMs = max(0, deadlineMs.map { max(atLeastMs, min($0 - WallClock.nowMs(), atMostMs)) } ?? atMostMs)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let serial: UInt64? = state.withLock { state in
                    if state.finished || state.wakePending || Task.isCancelled {
                        state.wakePending = false
                        return nil
                    }
                    state.serial &+= 1
                    state.sleeper = continuation
                    return state.serial
                }
                guard let serial else { return continuation.resume() }
                let timer = Task { [weak self] in
                    // Cancelled means the sleep already ended: nothing to do.
                    guard (try? await Task.sleep(for: .milliseconds(waitMs))) != nil else { return }
                    self?.deadlinePassed(serial)
                }
                let stale = state.withLock { state in
                    guard state.serial == serial, state.sleeper != nil else { return true }
                    state.timer = timer
                    return false
                }
                if stale { timer.cancel() }
            }
        } onCancel: {
            endSleep { _ in }
        }
    }

    /// The loop of a background worker that owns this signal: runs `pass` until the daemon's
    /// graceful shutdown (a pass under way finishes; the task's cancellation ends it too), and
    /// between passes sleeps until woken or until the deadline `pass` returns (Unix ms, nil
    /// for none), at most `atMostMs` and at least `atLeastMs`.
    ///
    /// ```swift
    /// func run() async { await wakeSignal.serve(atMostMs: 60_000) { await self.sweep() } }
    /// ```
    public func serve(atMostMs: Int64, atLeastMs: Int64 = 1, _ pass: @Sendable () async -> Int64?) async {
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                let next = await pass()
                guard !Task.isShuttingDownGracefully else { return }
                await sleep(until: next, atMostMs: atMostMs, atLeastMs: atLeastMs)
            }
        } onGracefulShutdown: { [self] in
            finish()
        }
    }

    private func deadlinePassed(_ serial: UInt64) {
        let sleeper = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.serial == serial else { return nil }
            state.timer = nil
            defer { state.sleeper = nil }
            return state.sleeper
        }
        sleeper?.resume()
    }

    /// Applies `change`, then ends the running sleep (if any) and cancels its timer.
    private func endSleep(_ change: (inout State) -> Void) {
        let (sleeper, timer) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            change(&state)
            defer {
                state.sleeper = nil
                state.timer = nil
            }
            return (state.sleeper, state.timer)
        }
        timer?.cancel()
        sleeper?.resume()
    }
}
