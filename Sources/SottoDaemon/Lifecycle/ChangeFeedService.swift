import DaemonEngine
import ServiceLifecycle

/// How the change feed learns of commits while the daemon serves: the workers' datagrams on
/// `events.sock` and the daemon's own commits (wired at start-up), each a catch-up request
/// that this service serves, coalesced (``ChangeFeed/requestCatchUp()``), and under them the safety-net poll (``SafetyNetPoll``), so a lost datagram
/// costs at most its interval. On a graceful shutdown (after the outbox and the
/// explode worker stopped writing) it stops listening, catches up one last
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
        async let requested: Void = feed.serveRequests()
        await withGracefulShutdownHandler {
            while !Task.isShuttingDownGracefully, !Task.isCancelled {
                // Off: a catch-up a day, which costs nothing.
                await pause.sleep(until: nil, atMostMs: poll.intervalMs.map(Int64.init) ?? 86_400_000)
                guard !Task.isShuttingDownGracefully else { break }
                await feed.catchUp()
            }
        } onGracefulShutdown: { [feed] in
            pause.finish()
            feed.stopServingRequests()
        }
        feed.stopServingRequests()  // also when cancelled rather than shut down
        await requested
        events.stop()
        await feed.catchUp()
        await feed.finishAll()
    }
}
