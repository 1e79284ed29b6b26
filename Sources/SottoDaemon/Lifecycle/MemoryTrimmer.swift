import DaemonEngine
import Glibc
import ServiceLifecycle
import SottoWire

/// Gives freed memory back to the system once the daemon has finished something: when the
/// change feed moved since the last trim and then stood still for `intervalMs`,
/// `malloc_trim(0)`. glibc keeps what the daemon frees in its arenas, spread between live
/// allocations, and a long-running process that allocated in many places keeps a growing
/// share of free pages resident. In the soak (docs/adr/0053) one call took a daemon's private
/// memory from 11.8 to 9.3 MB. An idle daemon does not trim again: nothing moved.
///
/// ```swift
/// let part = MemoryTrimmer(feed: feed)   // a DaemonServices part
/// ```
struct MemoryTrimmer: Service {
    static let intervalMs: Int64 = 5_000

    /// glibc's `malloc_trim`: declared in `<malloc.h>`, which the Glibc module leaves out.
    static let mallocTrim: (@convention(c) (Int) -> Int32)? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim")
        .map { unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self) }

    let feed: ChangeFeed
    private let signal = WakeSignal()

    init(feed: ChangeFeed) {
        self.feed = feed
    }

    func run() async {
        let positions = Positions()
        await signal.serve(atMostMs: Self.intervalMs) { [feed] in
            if await positions.settled(at: await feed.lastSeq) { _ = Self.mallocTrim?(0) }
            return WallClock.nowMs() + Self.intervalMs
        }
    }

    /// Where the feed was at the last look and at the last trim.
    actor Positions {
        private var looked: Int64 = -1
        private var trimmed: Int64 = -1

        /// True once per burst of changes: the feed stands where it stood at the last look
        /// (quiet for an interval) and has moved since the last trim.
        func settled(at seq: Int64) -> Bool {
            defer { looked = seq }
            guard seq == looked, seq != trimmed else { return false }
            trimmed = seq
            return true
        }
    }
}
