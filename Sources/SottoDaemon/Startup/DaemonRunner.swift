import DaemonLogging
import Foundation
import ServiceLifecycle
import SharedStore

/// `sotto daemon` from start to exit. One `ServiceGroup` owns SIGTERM and SIGINT from the
/// first moment and runs the daemon (`DaemonService`): start-up, `READY=1`, its parts
/// (`DaemonServices`, where the shutdown order is written down), and on a signal
/// `STOPPING=1` and the drain. The exit code says how it ended: 0 after a signal (also one
/// that came during start-up), a sysexits.h code when start-up failed, 70 when a part
/// failed while serving (so systemd restarts it).
///
/// ```swift
/// exit(await DaemonRunner(groupDirectory: nil, capacity: 20).run())
/// ```
public struct DaemonRunner {
    let groupDirectory: String?
    let capacity: Int

    public init(groupDirectory: String?, capacity: Int) {
        self.groupDirectory = groupDirectory
        self.capacity = capacity
    }

    /// EX_SOFTWARE: a part of the running daemon failed.
    static let partFailedExitCode: Int32 = 70

    public func run() async -> Int32 {
        let daemon = DaemonService(groupDirectory: groupDirectory, capacity: capacity,
                                   environment: ProcessInfo.processInfo.environment)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: DaemonLog.logger))
        do {
            try await group.run()
            return 0
        } catch let failure as DaemonStartup.StartupFailure {
            DaemonLog.error(failure.description)
            if failure.exitCode != 0 { SystemdNotifier().exiting(reason: failure.description) }
            return failure.exitCode
        } catch {
            DaemonLog.error("stopped after a failure: \(error)")
            SystemdNotifier().exiting(reason: "stopped after a failure: \(error)")
            return Self.partFailedExitCode
        }
    }
}

/// The daemon as the one service of `DaemonRunner`'s group: start-up, then its parts as a
/// child group until the graceful shutdown reaches them. A stop requested during start-up
/// lets start-up finish (it is bounded and leaves the files consistent), then stops
/// without ever saying `READY=1`.
///
/// ```swift
/// let group = ServiceGroup(configuration: .init(services: [daemon], gracefulShutdownSignals: [.sigterm], logger: log))
/// ```
struct DaemonService: Service {
    let groupDirectory: String?
    let capacity: Int
    let environment: [String: String]

    func run() async throws {
        let startup = DaemonStartup(groupDirectory: groupDirectory, capacity: capacity, environment: environment)
        let started = try await withGracefulShutdownHandler {
            try await startup.run()
        } onGracefulShutdown: {
            DaemonLog.info("stop requested during start-up; stopping once start-up is done")
        }
        defer { started.lock.release() }
        let notifier = SystemdNotifier()
        guard !Task.isShuttingDownGracefully else {
            notifier.stopping()
            await started.closeSockets()
            DaemonLog.info("stopped before READY=1")
            return
        }
        // READY=1 before the parts start: every socket is bound (a client's connect succeeds
        // and is answered once the control part runs), and no part's first pass (a sweep, a
        // refill's key generation) delays it.
        notifier.ready(status: await started.context.statusLine())
        DaemonLog.info(started.readyLine)
        let parts = DaemonServices(context: started.context, control: started.control, events: started.events,
                                   feedPoll: started.feedPoll, rebalance: started.rebalance,
                                   notifier: notifier, environment: environment)
        try await parts.group(logger: DaemonLog.logger).run()
        // The kernel copy of the key lives no longer than the daemon (docs/adr/0045): under
        // PrivateUsers=yes it dies with the daemon's user namespace anyway, but only some time
        // after; this makes it at once, and the same outside systemd.
        if started.context.keystore.masterKeySource == .kernelKeyring {
            MasterKeyStartup.forgetKernelCopy(keystoreDirectory: started.context.keystore.directory)
        }
        DaemonLog.info("stopped")
    }
}

/// One daemon per group directory: an exclusive `flock` on `daemon.lock`, released by the
/// kernel if the process dies.
public struct InstanceLock: Sendable {
    let fd: Int32

    public static func acquire(path: String) -> InstanceLock? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return InstanceLock(fd: fd)
    }

    public func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
