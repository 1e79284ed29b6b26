import ServiceLifecycle

/// How the change feed learns of commits while the daemon serves: the workers' datagrams on
/// `events.sock` (each one a catch-up through its seq), the daemon's own commits (wired at
/// start-up), and under them the safety-net poll (``SafetyNetPoll``), so a lost datagram
/// costs at most its interval. On a graceful shutdown (after the outbox and the
/// expired-conversations worker stopped writing) it stops listening, catches up one last
/// time and ends every subscription.
///
/// ```swift
/// let part = ChangeFeedService(feed: feed, events: events, poll: try SafetyNetPoll(environment: env))
/// ```
struct ChangeFeedService: Service {
    let feed: ChangeFeed
    let events: EventsSocketListener
    let poll: SafetyNetPoll

    func run() async throws {
        events.start()
        let pause = WakeSignal()
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                // Off: a catch-up a day, which costs nothing.
                await pause.sleep(until: nil, atMostMs: poll.intervalMs.map(Int64.init) ?? 86_400_000)
                guard !Task.isShuttingDownGracefully else { break }
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
