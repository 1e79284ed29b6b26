import ControlServer
import DaemonEngine
import Foundation
import RelayTransport
import SottoCrypto
import SottoWire

/// `sotto daemon`'s start-up, step by step, up to the moment it can serve: directories,
/// the single-instance lock, the control limits, the database and every service
/// (`DaemonContext`), the inboxes to keep awake, both sockets bound, and a catch-up on what
/// workers wrote while the daemon was down. A step that fails throws a `StartupFailure`
/// carrying the exit code that says why (sysexits.h), and leaves nothing held.
///
/// ```swift
/// let started = try await DaemonStartup(groupDirectory: nil, capacity: 20, environment: env).run()
/// defer { started.lock.release() }
/// ```
struct DaemonStartup {
    struct StartupFailure: Error, CustomStringConvertible {
        let exitCode: Int32
        let description: String
    }

    /// What start-up built and holds, handed to the daemon's parts.
    struct Started {
        let context: DaemonContext
        let lock: InstanceLock
        let control: ControlServer
        let events: EventsSocketListener
        let feedPoll: SafetyNetPoll
        let rebalance: RebalanceSchedule
        let readyLine: String

        /// Closes both sockets without having served (a stop requested during start-up).
        func closeSockets() async {
            await control.stop()
            events.stop()
        }
    }

    let groupDirectory: String?
    let capacity: Int
    let environment: [String: String]

    func run() async throws -> Started {
        // Before anything is created or written: a relay setting that cannot work is a
        // configuration error (EX_CONFIG, as sotto-relayd), not a daemon that never delivers.
        let relay: RelayConfiguration?
        do throws(RelayError) {
            relay = try RelayConfiguration.from(environment: environment)
        } catch {
            throw StartupFailure(exitCode: RelayError.configurationExitStatus, description: "\(error)")
        }
        do {
            _ = try MasterKeyStartup.mode(environment)  // SOTTO_KEY_STORE, likewise before any write
        } catch {
            throw StartupFailure(exitCode: 78, description: "\(error)")
        }
        let group = GroupDirectory.resolve(explicit: groupDirectory, environment: environment)
        let runtime = RuntimeDirectory.resolve(environment: environment)
        let fileLimit = FileDescriptorLimit.raiseSoftToHard()
        umask(0o077)  // the database, its WAL and the sockets are the user's alone
        do {
            try group.create()
            try runtime.create()
        } catch {
            throw StartupFailure(exitCode: 73, description: "cannot create directories: \(error)")  // EX_CANTCREAT
        }
        guard let lock = InstanceLock.acquire(path: group.path + "/daemon.lock") else {
            throw StartupFailure(exitCode: 75, description: "another sotto daemon is already running for \(group.path)")  // EX_TEMPFAIL
        }
        do {
            return try await serve(group: group, runtime: runtime, fileLimit: fileLimit, lock: lock, relay: relay)
        } catch {
            lock.release()
            throw error
        }
    }

    private func serve(group: GroupDirectory, runtime: RuntimeDirectory, fileLimit: Int,
                       lock: InstanceLock, relay: RelayConfiguration?) async throws -> Started {
        let controlLimits: ControlLimits
        let feedPoll: SafetyNetPoll
        let rebalance: RebalanceSchedule
        let pendingJoinLimit: PendingJoinLimit
        let noticeMaxAgeMs: Int64
        let relayIdleMs: Int64
        let attachmentAutoFetchBytes: Int64
        do {
            controlLimits = try ControlLimits.forFileLimit(fileLimit, environment: environment)
            feedPoll = try SafetyNetPoll(environment: environment)
            rebalance = try RebalanceSchedule(environment: environment)
            pendingJoinLimit = try PendingJoinLimit(environment: environment)
            noticeMaxAgeMs = try OutboxSender.noticeMaxAge.read(environment)  // docs/adr/0034
            relayIdleMs = try RelayConnections.idleSetting.read(environment)  // docs/adr/0044
            attachmentAutoFetchBytes = try AttachmentFetcher.automaticLimitSetting.read(environment)  // docs/adr/0078
        } catch {
            throw StartupFailure(exitCode: 78, description: "\(error)")  // EX_CONFIG
        }

        let context: DaemonContext
        do {
            try StartupIntegrityCheck.run(group: group, environment: environment)
            // Waits here while the keyring is locked (docs/adr/0045): nothing before the
            // database needs the key, and the database's migration to v10 needs it (docs/adr/0052).
            let keystore = try await MasterKeyStartup(group: group, runtime: runtime, environment: environment)
                .openKeystore(notifier: SystemdNotifier())
            context = try await DaemonContext.start(group: group, runtime: runtime, keystore: keystore, capacity: capacity,
                                                    environment: environment, relay: relay, pendingJoinLimit: pendingJoinLimit,
                                                    noticeMaxAgeMs: noticeMaxAgeMs, relayIdleMs: relayIdleMs,
                                                    attachmentAutoFetchBytes: Int(attachmentAutoFetchBytes))
            try await context.launchInboxes()
            await context.attachmentFetcher.resumeUnfinished()
        } catch let refusal as MasterKeyStartup.Refusal {
            throw StartupFailure(exitCode: 78, description: "start-up failed: \(refusal)")  // EX_CONFIG: no restart loop
        } catch is MasterKeyStartup.Stopped {
            throw StartupFailure(exitCode: 0, description: "stopped while waiting for the master key")
        } catch {
            throw StartupFailure(exitCode: 70, description: "start-up failed: \(error)")
        }

        // Every commit reaches the feed without a poll: the daemon's own through the database's
        // commit signal, a worker's through its datagram (catch up through its seq).
        let feed = context.feed
        context.database.commits.onCommit { feed.requestCatchUp() }
        let events: EventsSocketListener
        let control: ControlServer
        do {
            events = try EventsSocketListener.bind(path: runtime.eventsSocketPath) { _ in feed.requestCatchUp() }
            let controlStats = ControlStats()
            do {
                control = try ControlServer.listen(path: runtime.controlSocketPath, limits: controlLimits, stats: controlStats,
                                                   handler: RPCDispatcher(daemon: context.api, controlStats: controlStats))
            } catch {
                events.stop()
                throw error
            }
        } catch {
            throw StartupFailure(exitCode: 71, description: "cannot open sockets: \(error)")
        }

        // What workers wrote while the daemon was down, and requests stored meanwhile.
        await feed.catchUp()
        await context.joinRequests.handleAllPending()
        await context.joinRequests.announceAllAfterLeaves()
        return Started(context: context, lock: lock, control: control, events: events, feedPoll: feedPoll, rebalance: rebalance,
                       readyLine: "ready: group \(group.path), control \(runtime.controlSocketPath) "
                           + "(at most \(controlLimits.maxConnections) clients; \(fileLimit) open files), "
                           // Whether SOTTO_RELAY (relay.env under systemd) reached the daemon.
                           + (relay.map { "relay \($0.url)" } ?? "no relay (direct endpoints only)"))
    }
}
