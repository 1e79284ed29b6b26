import Foundation

/// Runs one blocking delivery (a connect, a write, up to 10 s waiting for an ack) on a thread
/// of its own and awaits its result. The cooperative pool has one thread per core: the eight
/// lanes of a direct fan-out blocked on sockets there would hold every thread of the daemon
/// (measured: two lanes at a time on this 2-core machine, docs/adr/0053).
///
/// ```swift
/// let result = await BlockingDelivery.run { PushDelivery.deliver(payload, to: endpoint) }
/// ```
enum BlockingDelivery {
    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "push-delivery"
            thread.start()
        }
    }
}
