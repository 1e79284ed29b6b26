import ControlProtocol
import Foundation
import SharedStore

/// The daemon's view of `change_log`: it catches up on what any process committed (on a
/// worker's datagram, on its own writes, and on a safety-net poll), hands each change to
/// the daemon's consumer (conversation stores, inbox wake-ups) and streams it to control
/// socket subscribers. `subscribe(since:)` replays what a client missed, then goes live,
/// with no gap and no duplicate because both happen on this actor.
///
/// ```swift
/// let feed = ChangeFeed(database: db, consumer: { changes in await core.apply(changes) })
/// let stream = await feed.subscribe(since: 120)   // replays 121…, then live
/// await feed.catchUp()
/// ```
actor ChangeFeed {
    typealias Consumer = @Sendable ([DBChange]) async -> Void

    private let database: DaemonDatabase
    private let consumer: Consumer
    private(set) var lastSeq: Int64 = 0
    private var subscribers: [UUID: AsyncStream<DBChange>.Continuation] = [:]
    private var connectionSubscriptions: [ObjectIdentifier: UUID] = [:]
    private static let batchSize = 500
    /// A subscriber that falls this far behind is dropped (it can resubscribe with `since`).
    static let subscriberBuffer = 10_000

    init(database: DaemonDatabase, startingAt seq: Int64, consumer: @escaping Consumer) {
        self.database = database
        self.lastSeq = seq
        self.consumer = consumer
    }

    /// Reads every change after `lastSeq`, in order, and delivers it.
    func catchUp() async {
        while true {
            let from = lastSeq
            let batch: [DBChange]
            do {
                batch = try database.read { conn in try ChangeLogRepository.since(seq: from, limit: Self.batchSize, on: conn) }
            } catch {
                DaemonLog.warning("change feed read failed: \(error)")
                return
            }
            guard let last = batch.last else { return }
            lastSeq = last.seq
            // Deliver before the first suspension: catchUp is re-entered (a worker's datagram,
            // the safety-net poll) while `consumer` runs, and a later batch must not reach
            // subscribers before this one (the stress storm saw seqs out of order).
            for change in batch { deliver(change) }
            await consumer(batch)
            if batch.count < Self.batchSize { return }
        }
    }

    /// Changes the replay could not read (a damaged page of change_log): reported to the
    /// subscriber instead of skipped in silence.
    struct Gap: Sendable, Equatable {
        /// The last change delivered before the gap, and the first delivered after it (nil
        /// when nothing after it could be read).
        let afterSeq: Int64
        let resumedAtSeq: Int64?
        let reason: String

        var rpcObject: [String: Any] {
            var object: [String: Any] = ["afterSeq": afterSeq, "reason": reason]
            if let resumedAtSeq { object["resumedAtSeq"] = resumedAtSeq }
            return object
        }
    }

    /// A stream of changes with `seq > since` (all of change_log that is still kept), then
    /// every new change as it is committed. `since == nil`: live changes only. A replay that
    /// meets a damaged page reads on from the newest change downwards, so only the damaged
    /// page's changes are missing, and says where they are (`gap`).
    func subscribe(since: Int64?) -> (id: UUID, stream: AsyncStream<DBChange>, gap: Gap?) {
        let (stream, continuation) = AsyncStream<DBChange>.makeStream(bufferingPolicy: .bufferingOldest(Self.subscriberBuffer))
        var gap: Gap?
        if let since, since < lastSeq {
            var cursor = since
            while cursor < lastSeq {
                let from = cursor
                let batch: [DBChange]
                do {
                    batch = try database.read { conn in try ChangeLogRepository.since(seq: from, limit: Self.batchSize, on: conn) }
                } catch {
                    gap = replayAroundDamage(after: from, upTo: lastSeq, error: error, into: continuation)
                    break
                }
                guard !batch.isEmpty else { break }
                for change in batch where change.seq <= lastSeq {
                    continuation.yield(change)
                }
                cursor = batch.last!.seq
            }
        }
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return (id, stream, gap)
    }

    /// Reads on, on a connection of its own (a read whose transaction met damage fails whole,
    /// even for the rows read before it): forward up to the damaged page, then backward from
    /// the newest change down to it. Yields what it read; returns where the gap is.
    private func replayAroundDamage(after from: Int64, upTo: Int64, error: any Error,
                                    into continuation: AsyncStream<DBChange>.Continuation) -> Gap {
        let conn = try? StoreConnection.open(path: database.path, profile: .worker)
        let head = conn.map { ChangeLogRepository.readable(after: from, upTo: upTo, newestFirst: false, on: $0).changes } ?? []
        let gapStart = head.last?.seq ?? from
        let tail = conn.map { ChangeLogRepository.readable(after: gapStart, upTo: upTo, newestFirst: true, on: $0).changes } ?? []
        for change in head + tail { continuation.yield(change) }
        DaemonLog.error("change feed replay: changes after #\(gapStart)" + (tail.first.map { " before #\($0.seq)" } ?? "")
                        + " cannot be read: \(error)")
        return Gap(afterSeq: gapStart, resumedAtSeq: tail.first?.seq, reason: "\(error)")
    }

    /// Streams changes to a control-socket client as `change` notifications until it
    /// disconnects. Returns the seq the feed is at (replayed changes are up to it) and the
    /// gap the replay met, if any.
    func subscribe(connection: ControlConnection, since: Int64?) -> (lastSeq: Int64, gap: Gap?) {
        let key = ObjectIdentifier(connection)
        if let previous = connectionSubscriptions[key] { unsubscribe(previous) }
        let (id, stream, gap) = subscribe(since: since)
        connectionSubscriptions[key] = id
        let database = self.database
        Task.detached {
            for await change in stream {
                let params = Self.notificationParams(change, database: database)
                guard connection.send(JSONRPC.notificationLine(params)) else { break }
            }
        }
        return (lastSeq, gap)
    }

    /// A `change` notification's params; a new message also carries what `sotto watch`
    /// prints for it: its text and its sender's profile name (when it has one).
    static func notificationParams(_ change: DBChange, database: DaemonDatabase) -> ChangeNotification {
        var notification = ChangeNotification(change)
        guard change.knownKind == .messageInserted, let id = change.entityId,
              let row = try? database.read({ conn in try MessageRepository.find(id: id, on: conn) }) else { return notification }
        let message = TimelineMessage(row)
        notification.text = message.text
        notification.outgoing = message.isOutgoing
        notification.senderInboxId = message.senderInboxId
        if !message.isOutgoing, let name = try? database.read({ conn in
            try MemberRepository.profileName(conversationId: row.conversationId, inboxId: row.senderInboxId, on: conn)
        }), !name.isEmpty {
            notification.senderName = name
        }
        return notification
    }

    func unsubscribe(connection key: ObjectIdentifier) {
        if let id = connectionSubscriptions.removeValue(forKey: key) { unsubscribe(id) }
    }

    func unsubscribe(_ id: UUID) {
        subscribers.removeValue(forKey: id)?.finish()
    }

    var subscriberCount: Int { subscribers.count }

    func finishAll() {
        for continuation in subscribers.values { continuation.finish() }
        subscribers.removeAll()
    }

    private func deliver(_ change: DBChange) {
        for (id, continuation) in subscribers {
            if case .dropped = continuation.yield(change) {
                DaemonLog.warning("subscriber fell \(Self.subscriberBuffer) changes behind; dropped")
                subscribers.removeValue(forKey: id)?.finish()
            }
        }
    }
}
