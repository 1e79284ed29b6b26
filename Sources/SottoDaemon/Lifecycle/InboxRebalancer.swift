import DaemonCore
import DaemonEngine
import DaemonLogging
import ServiceLifecycle

/// Runs ``InboxLRU/rebalance()`` once per ``RebalanceSchedule`` interval while
/// the daemon serves (the source app's decision record "Inbox Lifecycle Management": the
/// awake set follows the activity ranking, periodically and after wakes). A slot an explode,
/// a released protection or a failed wake left free goes to the most active sleeping inbox;
/// what is awake beyond the ranking and unprotected goes to sleep.
///
/// Between passes it sleeps on a ``WakeSignal`` (no polling: an idle daemon stays within
/// docs/adr/0011). The sleep runs on the continuous clock, which counts time the machine
/// spent suspended, so a pass that fell due during a suspend runs at resume. A pass under way
/// when the daemon stops finishes; a failed pass (the ranking unreadable) is logged and the
/// next one tries again.
///
/// ```swift
/// let part = InboxRebalancer(inboxLRU: inboxLRU, schedule: try RebalanceSchedule(environment: env))
/// ```
struct InboxRebalancer: Service {
    let inboxLRU: InboxLRU
    let schedule: RebalanceSchedule

    func run() async throws {
        let pause = WakeSignal()
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                await pause.sleep(until: nil, atMostMs: schedule.intervalMs)
                guard !Task.isShuttingDownGracefully, !Task.isCancelled else { break }
                do {
                    try await inboxLRU.rebalance()
                } catch {
                    DaemonLog.warning("inbox rebalance failed (tried again in \(schedule.intervalMs) ms): \(error)")
                }
            }
        } onGracefulShutdown: {
            pause.finish()
        }
    }
}
