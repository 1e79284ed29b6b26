import ControlServer
import DaemonEngine
import Logging
import ServiceLifecycle

/// The daemon's long-running parts and THE place their order is decided. The service
/// group starts them in this order and, on a graceful shutdown (SIGTERM, SIGINT, or a part
/// that failed), tells them to stop in the reverse order, each one finishing before the
/// next is told:
///
/// 1. `systemd`: `STOPPING=1` (systemd knows at once), the watchdog pings end.
/// 2. `control`: stop accepting control clients and close every connection; a request
///    that already committed (a `send`) has kicked the outbox, which still runs.
/// 3. `memory-trim` and `inbox-rebalance`: a pass under way finishes (they write nothing).
/// 4. `unused-inbox`: a refill under way finishes.
/// 5. `outbox`: the push in flight gets its ack (or its deadline) and is recorded as sent,
///    failed or pending; nothing new starts. A restart delivers what is pending.
/// 6. `receipts`: a batch under way is sealed and queued (or not at all); the rows left are
///    sealed after a restart.
/// 7. `roster-requests`: a request, an answer or a rename under way is queued (or not at
///    all); what is still due is asked, answered or renamed after a restart.
/// 8. `explode-worker`: a deletion under way finishes (an explosion, or a join
///    never accepted).
/// 9. `desktop-notifications`: `notifications.sock` goes, so workers post their own again.
/// 10. `change-feed`: `events.sock` closes, a last catch-up reads what the parts above
///    committed, subscriptions end.
/// 11. `wal-keeper`: a last checkpoint, once nothing of this process writes any more.
///
/// Any part that throws (or returns while the daemon runs) starts the same graceful
/// shutdown of the others; the group then rethrows its error.
///
/// ```swift
/// let parts = DaemonServices(context: context, control: control, events: events, feedPoll: poll,
///                            rebalance: RebalanceSchedule(), notifier: SystemdNotifier(), environment: environment)
/// try await parts.group(logger: DaemonLog.logger).run()
/// ```
struct DaemonServices {
    let parts: [DaemonPart]

    init(context: DaemonContext, control: ControlServer, events: EventsSocketListener, feedPoll: SafetyNetPoll,
         rebalance: RebalanceSchedule, notifier: SystemdNotifier, environment: [String: String]) {
        let ordered: [(String, any Service)] = [
            ("wal-keeper", context.walKeeper),
            ("change-feed", ChangeFeedService(feed: context.feed, events: events, poll: feedPoll)),
            ("desktop-notifications", DesktopNotificationsService(runtime: context.runtime, environment: environment)),
            ("explode-worker", context.explodeWorker),
            ("roster-requests", context.rosterRequests),
            ("receipts", context.receipts),
            ("outbox", context.outbox),
            ("unused-inbox", UnusedInboxRefill(cache: context.unusedInboxes)),
            ("inbox-rebalance", InboxRebalancer(inboxLRU: context.inboxLRU, schedule: rebalance)),
            ("memory-trim", MemoryTrimmer(feed: context.feed)),
            ("control", ControlServerService(server: control)),
            ("systemd", SystemdService(notifier: notifier) { await context.statusLine() }),
        ]
        parts = ordered.map { DaemonPart($0.0, $0.1, environment: environment) }
    }

    /// A group without signals of its own: it runs inside the daemon's group, whose
    /// graceful shutdown (on SIGTERM/SIGINT) reaches it.
    func group(logger: Logger) -> ServiceGroup {
        ServiceGroup(configuration: ServiceGroupConfiguration(
            services: parts.map { part in
                ServiceGroupConfiguration.ServiceConfiguration(
                    service: part, successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: part.name)
            },
            logger: logger))
    }
}
