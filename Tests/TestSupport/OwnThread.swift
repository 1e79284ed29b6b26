import Foundation

/// Runs blocking work (child processes, socket reads, polls) on a thread of its own and
/// awaits its result, so the test process's cooperative pool (as many threads as cores: two
/// on CI) stays free for the tests whose in-process servers need it. A long blocking test
/// body run on the pool held one of those two threads for its whole length.
///
/// The work runs in the calling task (a task executor preference, not a bare `Thread`), so
/// its task-local values come along: an `#expect` inside is recorded against the test that
/// called. From a bare thread, Swift Testing attributed such a failure to no test, and the
/// test passed.
///
/// ```swift
/// @Test func lifecycle() async throws { try await onOwnThread { try self.lifecycleSteps() } }
/// ```
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    let executor = OwnThreadExecutor()
    defer { executor.shutdown() }
    return try await withTaskExecutorPreference(executor) {
        // Calling into the closure does not hop by itself: a yield re-enqueues this task,
        // now on the executor it prefers.
        await Task.yield()
        return try work()
    }
}

/// One thread that runs the jobs given to it in order: a task executor for ``onOwnThread``.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "own-thread test"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// The thread ends once every job given before this has run.
    func shutdown() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
