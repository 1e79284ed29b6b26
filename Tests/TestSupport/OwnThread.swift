import Foundation

/// Runs blocking work (child processes, socket reads, polls) on a thread of its own and
/// awaits its result, so the test process's cooperative pool (as many threads as cores: two
/// on CI) stays free for the tests whose in-process servers need it. A long blocking test
/// body run on the pool held one of those two threads for its whole length.
///
/// ```swift
/// @Test func lifecycle() async throws { try await onOwnThread { try self.lifecycleSteps() } }
/// ```
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
