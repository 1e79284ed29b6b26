import ServiceLifecycle

/// How the change feed learns of commits while the daemon serves: the workers' datagrams on
/// `events.sock` (each one a `catchUp`), and under them a safety-net poll, so a lost
/// datagram costs at most `pollMs`. On a graceful shutdown (after the outbox and the
/// expired-conversations worker stopped writing) it stops listening, catches up one last
/// time and ends every subscription.
///
/// ```swift
/// let events = try EventsSocketListener.bind(path: runtime.eventsSocketPath) { _ in Task { await feed.catchUp() } }
/// let part = ChangeFeedService(feed: feed, events: events)
/// ```
struct ChangeFeedService: Service {
    static let pollMs: Int64 = 250

    let feed: ChangeFeed
    let events: EventsSocketListener

    func run() async throws {
        events.start()
        let pause = WakeSignal()
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                await pause.sleep(until: nil, atMostMs: Self.pollMs)
                await feed.catchUp()
            }
        } onGracefulShutdown: {
            pause.finish()
        }
        events.stop()
        await feed.catchUp()
        await feed.finishAll()
    }
}
