import Foundation
import SharedStore

/// `sotto daemon` from start to exit: take the single-instance lock, open and migrate the
/// database, start the services and sockets, tell systemd `READY=1`, ping the watchdog, and
/// on SIGTERM/SIGINT say `STOPPING=1` and drain (stop accepting, finish in-flight sends,
/// a last passive checkpoint) before exiting 0.
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

    public func run() async -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        let group = GroupDirectory.resolve(explicit: groupDirectory, environment: environment)
        let runtime = RuntimeDirectory.resolve(environment: environment)
        let notifier = SystemdNotifier()
        // Before anything else: a SIGTERM during start-up (or right after READY=1) must mean
        // "stop cleanly", never the default action of dying without STOPPING=1.
        let termination = SignalWaiter.install()
        let fileLimit = FileDescriptorLimit.raiseSoftToHard()
        umask(0o077)  // the database, its WAL and the sockets are the user's alone
        do {
            try group.create()
            try runtime.create()
        } catch {
            DaemonLog.error("cannot create directories: \(error)")
            return 73  // EX_CANTCREAT
        }
        guard let lock = InstanceLock.acquire(path: group.path + "/daemon.lock") else {
            DaemonLog.error("another sotto daemon is already running for \(group.path)")
            return 75  // EX_TEMPFAIL
        }
        defer { lock.release() }

        let controlLimits: ControlLimits
        let feedPoll: SafetyNetPoll
        do {
            controlLimits = try ControlLimits.forFileLimit(fileLimit, environment: environment)
            feedPoll = try SafetyNetPoll(environment: environment)
        } catch {
            DaemonLog.error("\(error)")
            return 78  // EX_CONFIG
        }

        let context: DaemonContext
        do {
            context = try await DaemonContext.start(group: group, runtime: runtime, capacity: capacity, environment: environment)
            try await context.launchInboxes()
        } catch {
            DaemonLog.error("start-up failed: \(error)")
            return 70
        }

        // Every commit reaches the feed without a poll: the daemon's own through the database's
        // commit signal, a worker's through its datagram (catch up through its seq).
        let feed = context.feed
        context.database.commits.onCommit { Task { await feed.catchUp() } }
        let events: EventsSocketListener
        let control: ControlServer
        do {
            events = try EventsSocketListener.bind(path: runtime.eventsSocketPath) { seq in
                Task {
                    if let seq { await feed.catchUp(through: seq) } else { await feed.catchUp() }
                }
            }
            let controlStats = ControlStats()
            control = try ControlServer.listen(path: runtime.controlSocketPath, limits: controlLimits, stats: controlStats,
                                               handler: RPCDispatcher(daemon: context, controlStats: controlStats))
        } catch {
            DaemonLog.error("cannot open sockets: \(error)")
            return 71
        }
        events.start()
        control.start()

        // Catch up on what workers wrote while the daemon was down, then keep watching.
        await feed.catchUp()
        await context.joinRequests.handleAllPending()  // requests stored while the daemon was down
        let background: [Task<Void, Never>] = [
            Task { await context.outbox.run() },
            Task { await context.expired.run() },
            Task { await context.walKeeper.run() },
            Task { _ = try? await context.unusedInboxes.replenish() },
            Task { await feedPoll.run(feed) },  // a lost datagram costs at most its interval
        ]
        let watchdog = notifier.watchdogInterval.map { interval in
            Task {
                while !Task.isCancelled {
                    notifier.watchdog()
                    notifier.status(await context.statusLine())
                    try? await Task.sleep(for: interval)
                }
            }
        }

        notifier.ready(status: await context.statusLine())
        DaemonLog.info("ready: group \(group.path), control \(runtime.controlSocketPath) "
                       + "(at most \(controlLimits.maxConnections) clients; \(fileLimit) open files)")

        let signal = await termination.wait()
        DaemonLog.info("received \(signal), stopping")
        notifier.stopping()
        control.stop()
        events.stop()
        watchdog?.cancel()
        await context.outbox.stop()
        await context.expired.stop()
        await context.walKeeper.stop()
        for task in background { task.cancel() }
        await feed.catchUp()
        await feed.finishAll()
        await context.walKeeper.tick()
        DaemonLog.info("stopped")
        return 0
    }
}

/// One daemon per group directory: an exclusive `flock` on `daemon.lock`, released by the
/// kernel if the process dies.
public struct InstanceLock {
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

/// Catches SIGTERM and SIGINT from the moment `install()` runs (Dispatch sources, so no
/// signal-handler restrictions) and hands the first one to `wait()`, however early it came.
///
/// ```swift
/// let termination = SignalWaiter.install()   // first thing in main
/// … start up …
/// let name = await termination.wait()        // "SIGTERM"
/// ```
final class SignalWaiter: @unchecked Sendable {
    private let lock = NSLock()
    private var received: String?
    private var waiter: CheckedContinuation<String, Never>?
    private var sources: [DispatchSourceSignal] = []

    static func install() -> SignalWaiter {
        let waiter = SignalWaiter()
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { waiter.deliver(name) }
            source.resume()
            waiter.sources.append(source)
        }
        return waiter
    }

    /// The first signal's name, at once if it already arrived.
    func wait() async -> String {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let received {
                lock.unlock()
                continuation.resume(returning: received)
                return
            }
            waiter = continuation
            lock.unlock()
        }
    }

    private func deliver(_ name: String) {
        lock.lock()
        guard received == nil else {
            lock.unlock()
            return
        }
        received = name
        let continuation = waiter
        waiter = nil
        lock.unlock()
        continuation?.resume(returning: name)
    }
}
