import DaemonLogging
import ServiceLifecycle

/// One long-running part of the daemon as the service group runs it: under its name, so a
/// part that throws says which it was in the log before the group shuts the others down
/// (and the daemon exits non-zero, so systemd restarts it), and a part that returns before
/// it was told to stop counts as a failure too: the daemon never keeps running without it.
///
/// `SOTTO_FAIL_SERVICE=<name>` makes that part throw as soon as it runs: a test hook, like
/// `SOTTO_CRASH_AT`, for the path a real failure takes (the part is cancelled and must let
/// go of what it holds, as on any error).
///
/// ```swift
/// let part = DaemonPart("outbox", outbox, environment: environment)
/// try await part.run()   // logs "outbox failed: …; stopping the daemon" and rethrows
/// ```
struct DaemonPart: Service, CustomStringConvertible {
    static let failureVariable = "SOTTO_FAIL_SERVICE"

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let name: String
    let service: any Service
    private let injectFailure: Bool

    init(_ name: String, _ service: any Service, environment: [String: String]) {
        self.name = name
        self.service = service
        self.injectFailure = environment[Self.failureVariable] == name
    }

    var description: String { name }

    func run() async throws {
        do {
            if injectFailure {
                try await runFailing()
            } else {
                try await service.run()
            }
        } catch {
            DaemonLog.error("\(name) failed: \(error); stopping the daemon")
            throw error
        }
        guard Task.isShuttingDownGracefully || Task.isCancelled else {
            DaemonLog.error("\(name) ended while the daemon was running; stopping the daemon")
            throw Failure(description: "\(name) ended while the daemon was running")
        }
    }

    /// Runs the part and throws at once beside it: the part's task is cancelled and awaited.
    private func runFailing() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            group.addTask { throw Failure(description: "failure injected by \(Self.failureVariable)") }
            try await group.next()
        }
    }
}
