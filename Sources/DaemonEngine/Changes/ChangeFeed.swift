import DaemonLogging
import Foundation
import DaemonStore
import SharedStore

/// The one path every committed change takes through the daemon (docs/adr/0022):
/// a commit (a worker's or the daemon's own) → the feed reads `change_log`, and what each
/// change is about, once (``FeedChange``) → the consumer applies it (conversation windows,
/// inbox wake-ups) → then subscribers get it, with its seq, in seq order, with no gap and no
/// duplicate. The feed yields its own values (``FeedChange``, ``FeedGap``); what a client reads
/// on the control socket is made of them by the daemon app, where the feed meets the socket.
///
/// Catch-ups are single-flight: whoever asks while one runs waits until the feed reached the
/// newest seq committed when it asked (at the latest, until a pass that started after it
/// asked ends), so `await feed.catchUp()` returns only once everything committed before the
/// call is applied and delivered (read-after-write and read-after-ack rest on this).
/// `subscribe(since:)` replays what a client missed, then goes live; both happen on this
/// actor against `lastSeq`, which moves only after a batch is applied and delivered.
///
/// ```swift
/// let feed = ChangeFeed(database: db, startingAt: 0) { changes in await router.route(changes) }  // [FeedChange]
/// let (lastSeq, gap, changes) = await feed.subscribe(key: key, since: 120, conversationId: nil)  // replays 121…, then live
/// await feed.catchUp()                 // after a commit: applied and delivered when this returns
/// feed.requestCatchUp()                // a commit or a worker's datagram: returns at once, coalesced
/// ```
public actor ChangeFeed {
    typealias Consumer = @Sendable ([FeedChange]) async -> Void

    private let database: DaemonDatabase
    private let consumer: Consumer
    /// Every change up to here was applied by the consumer and handed to subscribers.
    public private(set) var lastSeq: Int64
    private var subscribers = FeedSubscribers()
    private var passes = CatchUpPasses()
    /// Catch-ups asked for without waiting (``requestCatchUp()``), coalesced: one pending at most.
    private nonisolated let requests = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    /// What a subscriber told of a gap should do about it (the damaged database's remedy).
    private let damageRemedy: String
    private static let batchSize = 500

    init(database: DaemonDatabase, startingAt seq: Int64, damageRemedy: String = "",
         consumer: @escaping Consumer) {
        self.database = database
        self.lastSeq = seq
        self.damageRemedy = damageRemedy
        self.consumer = consumer
    }

    // MARK: Catching up

    /// Returns once every change committed before the call is applied and delivered. When
    /// nothing is new this is one indexed read (the newest seq) and no waiting.
    public func catchUp() async {
        let newest: Int64
        do {
            newest = try database.read { conn in try ChangeLogRepository.latestSeq(on: conn) }
        } catch {
            newest = .max  // cannot tell: a pass will say what it can read
        }
        await catchUp(through: newest)
    }

    /// Returns once the feed applied and told every change up to `seq`, or a pass that started
    /// after the call found nothing more (what a worker's datagram asks for: its seq is a hint,
    /// the truth is read from change_log). Nothing to do when the feed is already there.
    func catchUp(through seq: Int64) async {
        if seq <= lastSeq { return }
        let ticket = passes.request()
        guard passes.tryStart() else {
            await withCheckedContinuation { passes.wait(ticket: ticket, target: seq, $0) }
            return
        }
        while let covering = passes.nextPass() {
            await drain()
            passes.finish(covering, reached: lastSeq)
        }
    }

    /// Asks for a catch-up and returns at once (a commit, a worker's datagram). Requests that
    /// arrive while one runs become one more catch-up after it: a burst of commits costs no
    /// task each (docs/adr/0053; a task per commit was the first suspect of the soak's growth).
    public nonisolated func requestCatchUp() {
        requests.continuation.yield()
    }

    /// Serves ``requestCatchUp()`` until ``stopServingRequests()`` (the change-feed service runs it).
    public nonisolated func serveRequests() async {
        for await _ in requests.stream { await catchUp() }
    }

    public nonisolated func stopServingRequests() {
        requests.continuation.finish()
    }

    /// Reads change_log after `lastSeq` until it reads nothing: the consumer's own writes
    /// (a join request accepted while applying) are taken in the same pass.
    private func drain() async {
        while true {
            let from = lastSeq
            let batch: [FeedChange]
            do {
                batch = try database.read { conn in
                    FeedChange.read(try ChangeLogRepository.since(seq: from, limit: Self.batchSize, on: conn), on: conn)
                }
            } catch {
                DaemonLog.warning("change feed read failed: \(error)")
                return
            }
            guard let last = batch.last else { return }
            await consumer(batch)
            // Applied: now subscribers may hear of it (and whoever reads on hearing finds it).
            lastSeq = last.seq
            for change in batch { subscribers.deliver(change) }
            passes.reached(lastSeq)
        }
    }

    // MARK: Subscribing

    /// A stream of changes with `seq > since` (all of change_log that is still kept), then
    /// every new change once it is applied. `since == nil`: live changes only. With a
    /// `conversationId`, only that conversation's changes. A replay that meets a damaged page
    /// reads on from the newest change downwards, so only the damaged page's changes are
    /// missing, and says where they are (`gap`).
    func subscribe(since: Int64?, conversationId: String? = nil)
        -> (id: UUID, stream: AsyncStream<FeedChange>, gap: FeedGap?) {
        let (stream, continuation) = AsyncStream<FeedChange>.makeStream(bufferingPolicy: .bufferingOldest(FeedSubscribers.buffer))
        var gap: FeedGap?
        if let since, since < lastSeq {
            let upTo = lastSeq
            // Only the changes this subscriber wants, up to where the feed is, are read about.
            let wantedRow: (DBChange) -> Bool = { $0.seq <= upTo && (conversationId == nil || $0.conversationId == conversationId) }
            var cursor = since
            while cursor < upTo {
                let from = cursor
                let batch: (lastSeq: Int64?, changes: [FeedChange])
                do {
                    batch = try database.read { conn in
                        let rows = try ChangeLogRepository.since(seq: from, limit: Self.batchSize, on: conn)
                        return (rows.last?.seq, FeedChange.read(rows.filter(wantedRow), on: conn))
                    }
                } catch {
                    let (readable, found) = replayAroundDamage(after: from, upTo: upTo, error: error, wanted: wantedRow)
                    for change in readable { continuation.yield(change) }
                    gap = found
                    break
                }
                guard let last = batch.lastSeq else { break }
                for change in batch.changes { continuation.yield(change) }
                cursor = last
            }
        }
        let id = subscribers.add(continuation, conversationId: conversationId)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return (id, stream, gap)
    }

    /// Reads on, on a connection of its own (a read whose transaction met damage fails whole,
    /// even for the rows read before it): forward up to the damaged page, then backward from
    /// the newest change down to it. Returns what it read and where the gap is.
    private func replayAroundDamage(after from: Int64, upTo: Int64, error: any Error,
                                    wanted: (DBChange) -> Bool) -> ([FeedChange], FeedGap) {
        let conn = try? SQLiteConnection.open(path: database.path, profile: .worker)
        conn?.contentKeys = database.contentKeys
        let head = conn.map { ChangeLogRepository.readable(after: from, upTo: upTo, newestFirst: false, on: $0).changes } ?? []
        let gapStart = head.last?.seq ?? from
        let tail = conn.map { ChangeLogRepository.readable(after: gapStart, upTo: upTo, newestFirst: true, on: $0).changes } ?? []
        DaemonLog.error("change feed replay: changes after #\(gapStart)" + (tail.first.map { " before #\($0.seq)" } ?? "")
                        + " cannot be read: \(error)")
        let readable = conn.map { FeedChange.read((head + tail).filter(wanted), on: $0) } ?? []
        return (readable, FeedGap(afterSeq: gapStart, resumedAtSeq: tail.first?.seq, reason: "\(error)", remedy: damageRemedy))
    }

    /// The subscription of one client connection (`key`): its changes, replayed after `since`
    /// and then live, until the connection goes (``unsubscribe(connection:)``) or the stream's
    /// reader stops. One subscription per connection: a second `subscribe` replaces the first.
    /// Returns the seq the feed is at (replayed changes are up to it) and the gap the replay
    /// met, if any.
    public func subscribe(key: ObjectIdentifier, since: Int64?, conversationId: String?)
        -> (lastSeq: Int64, gap: FeedGap?, changes: AsyncStream<FeedChange>) {
        if let previous = subscribers.connection(key) { unsubscribe(previous) }
        let (id, stream, gap) = subscribe(since: since, conversationId: conversationId)
        subscribers.bind(key, to: id)
        return (lastSeq, gap, stream)
    }

    public func unsubscribe(connection key: ObjectIdentifier) {
        if let id = subscribers.connection(key) { unsubscribe(id) }
    }

    func unsubscribe(_ id: UUID) {
        subscribers.remove(id)
    }

    var subscriberCount: Int { subscribers.count }
    /// Callers waiting for a catch-up pass to cover them (tests watch it).
    var waitingCatchUps: Int { passes.waitingCount }

    public func finishAll() {
        subscribers.finishAll()
    }
}
