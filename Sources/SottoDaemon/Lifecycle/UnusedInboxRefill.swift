import DaemonCore
import DaemonLogging
import ServiceLifecycle

/// Prepares the unused inbox (an identity generated and stored ahead of `new` and `join`)
/// once the daemon serves, without holding back READY=1. Later refills are the cache's own
/// (after each `consume`); this part then only waits for the shutdown, so that its place in
/// the shutdown order holds and a refill under way at a SIGTERM is finished, not cut.
///
/// ```swift
/// let refill = UnusedInboxRefill(cache: unusedInboxes)
/// ```
struct UnusedInboxRefill: Service {
    let cache: UnusedInboxCache

    func run() async throws {
        do {
            try await cache.replenish()
        } catch {
            DaemonLog.warning("unused inbox not prepared yet: \(error)")
        }
        try? await gracefulShutdown()  // thrown only when cancelled: stop either way
    }
}
