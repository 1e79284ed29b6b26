@testable import DaemonEngine
import Synchronization
import Testing

/// The soak's steady growth (issue #21): each commit nested the feed's action two calls
/// deeper and kept what wrapped it. Measured here as the stack depth the action runs at,
/// which must not change from the first commit to the thousandth.
@Suite("Commit signal")
struct CommitSignalTests {
    /// The address of a local of the action's frame: lower as the call nests deeper.
    @inline(never)
    static func stackAddress() -> Int {
        var local = 0
        return withUnsafeMutablePointer(to: &local) { Int(bitPattern: $0) }
    }

    @Test("the 1,000th commit runs the action where the first did on the stack: firing does not wrap the stored action")
    func firingKeepsTheActionAsSet() {
        let signal = CommitSignal()
        let depths = Mutex([Int]())
        signal.onCommit { depths.withLock { $0.append(Self.stackAddress()) } }
        for _ in 0..<1_000 { signal.fire() }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 1_000)
        // Old code: two thunk frames more per commit, tens of kilobytes deeper by the 1,000th.
        let deeper = (seen.first ?? 0) - (seen.last ?? 0)
        #expect(abs(deeper) < 1_024, "the 1,000th commit ran the action \(deeper) bytes deeper on the stack than the first")
    }
}
