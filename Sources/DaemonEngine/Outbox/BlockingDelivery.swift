import NIOPosix

/// Runs one blocking delivery (a connect, a write, up to 10 s waiting for an ack) on one of
/// `OutboxSender.directLanes` threads kept for it, and awaits its result. The cooperative
/// pool has one thread per core: the eight lanes of a direct fan-out blocked on sockets there
/// would hold every thread of the daemon (measured: two lanes at a time on this 2-core
/// machine). A fixed pool, not a thread per push: each new thread may take a malloc arena of
/// its own, and the soak's memory rose with them (docs/adr/0053).
///
/// ```swift
/// let result = await BlockingDelivery.run { PushDelivery.deliver(payload, to: endpoint) }
/// ```
enum BlockingDelivery {
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: OutboxSender.directLanes)
        pool.start()
        return pool
    }()

    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        do {
            return try await pool.runIfActive(body)
        } catch {
            return body()  // the pool is never shut down; should it be, deliver here rather than lose the push
        }
    }
}
