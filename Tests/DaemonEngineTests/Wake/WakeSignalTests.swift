@testable import DaemonEngine
import Foundation
import Testing
import SottoWire

/// The sleep primitive of the outbox sender and the explode worker: a wake
/// ends one sleep, a deadline ends only its own sleep, and neither leaks into the next one
/// (issue #10: a leaked wake made every later sleep return at once, spinning a core).
@Suite("WakeSignal")
struct WakeSignalTests {
    /// "Returned at once": below the sleeps' 10 minutes (a sleep that is not ended fails), and
    /// loose enough for a full `swift test` run that keeps the cooperative pool's threads busy:
    /// a fresh-clone CI run measured 197 s for the deadline test below, so 60 s was crossable.
    static let promptly: Duration = .seconds(300)
    static let longMs: Int64 = 600_000

    static func timed(_ work: () async -> Void) async -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        await work()
        return clock.now - start
    }

    @Test("a sleep after a wake waits for its whole deadline")
    func sleepAfterWakeWaits() async {
        let signal = WakeSignal()
        signal.wake()
        #expect(await Self.timed { await signal.sleep(until: nil, atMostMs: Self.longMs) } < Self.promptly)
        let waited = await Self.timed { await signal.sleep(until: nil, atMostMs: 300) }
        #expect(waited >= .milliseconds(300), "the second sleep returned after \(waited)")
    }

    @Test("every sleep of a worker loop waits after one wake, pass after pass")
    func loopAfterWakeKeepsSleeping() async {
        let signal = WakeSignal()
        signal.wake()
        await signal.sleep(until: nil, atMostMs: Self.longMs)
        let waited = await Self.timed {
            for _ in 0..<5 { await signal.sleep(until: nil, atMostMs: 60, atLeastMs: 10) }
        }
        #expect(waited >= .milliseconds(300))
    }

    @Test("a wake during a sleep ends it early; the next sleep still waits")
    func wakeDuringSleep() async {
        let signal = WakeSignal()
        let sleeper = Task { await Self.timed { await signal.sleep(until: nil, atMostMs: Self.longMs) } }
        signal.wake()  // before or during the sleep: either way it ends it
        #expect(await sleeper.value < Self.promptly)
        #expect(await Self.timed { await signal.sleep(until: nil, atMostMs: 200) } >= .milliseconds(200))
    }

    @Test("wakes while nobody sleeps coalesce into one")
    func wakesCoalesce() async {
        let signal = WakeSignal()
        for _ in 0..<3 { signal.wake() }
        #expect(await Self.timed { await signal.sleep(until: nil, atMostMs: Self.longMs) } < Self.promptly)
        #expect(await Self.timed { await signal.sleep(until: nil, atMostMs: 200) } >= .milliseconds(200))
    }

    @Test("a deadline in the past still waits atLeastMs; one far ahead is capped at atMostMs")
    func deadlineBounds() async {
        let signal = WakeSignal()
        let past = WallClock.nowMs() - 10_000
        #expect(await Self.timed { await signal.sleep(until: past, atMostMs: Self.longMs, atLeastMs: 100) } >= .milliseconds(100))
        let farAhead = WallClock.nowMs() + 3_600_000
        #expect(await Self.timed { await signal.sleep(until: farAhead, atMostMs: 150) } < Self.promptly)
    }

    @Test("finish ends the current and every later sleep; cancelling the sleeper ends its sleep")
    func finishAndCancel() async {
        let signal = WakeSignal()
        let sleeper = Task { await Self.timed { await signal.sleep(until: nil, atMostMs: Self.longMs) } }
        signal.finish()
        #expect(await sleeper.value < Self.promptly)
        #expect(await Self.timed { await signal.sleep(until: nil, atMostMs: Self.longMs) } < Self.promptly)

        let other = WakeSignal()
        let cancelled = Task { await Self.timed { await other.sleep(until: nil, atMostMs: Self.longMs) } }
        cancelled.cancel()
        #expect(await cancelled.value < Self.promptly)
    }
}
