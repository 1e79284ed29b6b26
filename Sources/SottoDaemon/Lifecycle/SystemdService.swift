import DaemonEngine
import DaemonLogging
import ServiceLifecycle

/// The daemon's side of systemd while it serves (`READY=1` was sent just before the parts
/// started): `WATCHDOG=1` with a fresh STATUS every half `WATCHDOG_USEC` when systemd asked
/// for pings, and `STOPPING=1` as the first thing a graceful shutdown does (it is the last
/// part, so it stops first).
///
/// ```swift
/// let systemd = SystemdService(notifier: SystemdNotifier()) { await context.statusLine() }
/// ```
struct SystemdService: Service {
    let notifier: SystemdNotifier
    let status: @Sendable () async -> String

    func run() async throws {
        if let interval = notifier.watchdogInterval {
            let pause = WakeSignal()
            await withGracefulShutdownHandler {
                while !Task.isShuttingDownGracefully, !Task.isCancelled {
                    notifier.watchdog()
                    notifier.status(await status())
                    await pause.sleep(until: nil, atMostMs: interval.wholeMilliseconds)
                }
            } onGracefulShutdown: {
                pause.finish()
            }
        } else {
            try? await gracefulShutdown()  // thrown only when cancelled: stop either way
        }
        notifier.stopping()
        DaemonLog.info("stopping")
    }
}
