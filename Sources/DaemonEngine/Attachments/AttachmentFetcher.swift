import DaemonCore
import DaemonLogging
import DaemonStore
import NIOPosix
import SharedStore
import SottoCrypto
import SottoWire

/// Fetches the stored files of incoming attachment messages in the background, one at a time,
/// from the relay this device receives the conversation on (docs/adr/0078), or from the
/// sender's device when both receive on direct endpoints (docs/adr/0079): each piece checked
/// as it arrives (`AttachmentDecryptor`), written to `.<messageId>.partial`, the digest of the
/// whole checked, then fsync, rename to the final name, fsync of the directory, and only then
/// `available` in the database. So a file is whole under its name or not there; a kill or a
/// power cut leaves a partial file that the next fetch resumes from its last whole piece.
///
/// A new incoming file up to `automaticLimit` bytes (default 25 MiB) is fetched at once; a
/// larger one when asked (`fetch(messageId:)`, `sotto save`). A fetch that fails for a reason
/// that may pass (the relay or the sender's device unreachable, the disk) is tried again after 2, 10 and 30 s, then
/// recorded `failed`; a final one (a piece missing or refused) is recorded `failed` at once
/// and its partial file removed. Nothing runs while there is nothing to fetch.
///
/// ```swift
/// let fetcher = AttachmentFetcher(database: database, store: attachments, relays: outbox.relays)
/// await fetcher.consider(message)                 // the change router: a new incoming message
/// let outcome = await fetcher.fetch(messageId: id) // asked for: waits until it is done
/// ```
public actor AttachmentFetcher {
    /// How a fetch ended.
    public enum Outcome: Sendable, Equatable {
        /// The stored file is here, whole and checked.
        case available
        /// It could not be fetched; recorded `failed` with this reason.
        case failed(String)
        /// No such incoming attachment message (gone, outgoing, or another content type).
        case notFound
        /// Nothing can bring the file to this device (it receives the conversation on a direct
        /// endpoint and the sender on a relay): it stays `waiting`, and whoever asked is told why.
        case notCarried(String)
    }

    // MARK: Settings

    /// Files up to this many bytes are fetched as soon as their message is stored (issue #35).
    public static let defaultAutomaticLimit = 26_214_400
    /// `SOTTO_ATTACHMENT_AUTO_FETCH_BYTES`: this device's automatic size, 0 … 104,857,600.
    public static let automaticLimitSetting = NumberSetting(variable: "SOTTO_ATTACHMENT_AUTO_FETCH_BYTES",
                                                            default: Int64(defaultAutomaticLimit),
                                                            range: 0...Int64(AttachmentLayout.maxSize), unit: .bytes)
    /// Waits before the second, third and fourth try of a fetch that failed for a passing reason.
    static let retryDelaysMs: [Int64] = [2_000, 10_000, 30_000]

    // MARK: State

    private let database: DaemonDatabase
    private let store: AttachmentStore
    private let relays: RelayConnections
    public let automaticLimit: Int
    /// One fetch at a time, on a thread that may block on the relay and the disk for seconds.
    private let lane: NIOThreadPool
    private var queue: [String] = []
    private var waiters: [String: [CheckedContinuation<Outcome, Never>]] = [:]
    private var draining = false

    init(database: DaemonDatabase, store: AttachmentStore, relays: RelayConnections, automaticLimit: Int = defaultAutomaticLimit) {
        self.database = database
        self.store = store
        self.relays = relays
        self.automaticLimit = automaticLimit
        lane = NIOThreadPool(numberOfThreads: 1)
        lane.start()
    }

    deinit { lane.shutdownGracefully { _ in } }

    // MARK: What to fetch

    /// A message the change feed just stored: an incoming attachment up to the automatic size
    /// is queued.
    func consider(_ message: TimelineMessage) {
        guard !message.isOutgoing, let attachment = message.attachment, attachment.state == .waiting,
              attachment.size <= automaticLimit else { return }
        enqueue(message.id)
    }

    /// At start-up: what a stopped daemon left `fetching`, and the incoming files up to the
    /// automatic size the worker stored while the daemon was down.
    public func resumeUnfinished() {
        let messages: [DBMessage]
        do {
            messages = try database.read { conn in
                try AttachmentMessageRepository.unfinishedFetches(on: conn).compactMap { id in try MessageRowRepository.find(id: id, on: conn) }
            }
        } catch {
            DaemonLog.warning("attachment fetches not resumed: \(error)")
            return
        }
        for row in messages {
            guard let attachment = TimelineMessage(row).attachment else { continue }
            if attachment.state == .fetching || attachment.size <= automaticLimit { enqueue(row.id) }
        }
    }

    /// Fetches the message's file whatever its size (or finds it here) and returns how that
    /// ended; a fetch already queued or under way is waited for, not started twice.
    public func fetch(messageId: String) async -> Outcome {
        await withCheckedContinuation { continuation in
            waiters[messageId, default: []].append(continuation)
            enqueue(messageId)
        }
    }

    private func enqueue(_ messageId: String) {
        if !queue.contains(messageId) { queue.append(messageId) }
        guard !draining else { return }
        draining = true
        Task { await drain() }
    }

    private func drain() async {
        while !queue.isEmpty {
            let messageId = queue[0]
            let outcome = await fetchWithRetries(messageId)
            queue.removeFirst()
            for waiter in waiters.removeValue(forKey: messageId) ?? [] { waiter.resume(returning: outcome) }
        }
        draining = false
    }

    // MARK: One file

    private func fetchWithRetries(_ messageId: String) async -> Outcome {
        var attempt = 0
        while true {
            let result = await attemptFetch(messageId)
            switch result {
            case .done(let outcome):
                return outcome
            case .mayPass(let reason):
                guard attempt < Self.retryDelaysMs.count else {
                    return await record(messageId, failure: reason + "; asking for the file again (sotto save) tries again")
                }
                DaemonLog.info("attachment of message \(messageId.prefix(8)) not fetched yet (\(reason)); "
                               + "trying again in \(Self.retryDelaysMs[attempt] / 1000) s from its last whole piece")
                try? await Task.sleep(for: .milliseconds(Self.retryDelaysMs[attempt]))
                attempt += 1
            }
        }
    }

    private enum Attempt: Sendable {
        case done(Outcome)
        case mayPass(String)
    }

    private func attemptFetch(_ messageId: String) async -> Attempt {
        let source: AttachmentSource
        switch AttachmentSource.find(messageId: messageId, database: database, store: store) {
        case .found(let found): source = found
        case .notFound: return .done(.notFound)
        case .alreadyHere: return .done(.available)
        case .notCarried(let reason): return .done(.notCarried(reason))
        case .unreadable(let reason): return .mayPass(reason)
        }
        _ = await record(messageId, .fetching, bytesDone: 0)
        let database = database, relays = relays
        let result: AttachmentSource.Result
        do {
            result = try await lane.runIfActive {
                source.fetch(over: relays) { bytesDone in
                    _ = try? database.write { conn in
                        try AttachmentTransferWriter.record(messageId: messageId, .fetching, bytesDone: Int64(bytesDone), on: conn)
                    }
                }
            }
        } catch {
            return .mayPass("the daemon is shutting down")
        }
        switch result {
        case .whole:
            CrashPoint.reach("attachment.fetched")  // whole under its name, not yet `available`
            if !(await record(messageId, .available, bytesDone: source.reference.length)) {
                store.delete(conversationId: source.conversationId, messageId: messageId)
                return .done(.notFound)
            }
            DaemonLog.info("attachment of message \(messageId.prefix(8)) fetched: \(source.reference.length) bytes")
            await release(source)
            return .done(.available)
        case .final(let reason):
            store.deletePartial(conversationId: source.conversationId, messageId: messageId)
            return .done(await record(messageId, failure: reason))
        case .mayPass(let reason):
            return .mayPass(reason)
        }
    }

    /// Tells the relay the file came from that this member has it; the last member to do so
    /// deletes it there (docs/protocol/attachment-relay.md §6). A failure costs only relay
    /// storage until the file's age limit, so it is logged, not retried.
    private func release(_ source: AttachmentSource) async {
        let relays = relays
        guard let released = (try? await lane.runIfActive { source.release(over: relays) }) ?? nil else { return }
        let file = "attachment of message \(source.messageId.prefix(8))", relay = released.relay
        switch released.outcome {
        case .success(.deleted(let fetched)):
            DaemonLog.info("\(file): every member that fetches it from relay \(relay) has it (\(fetched)); deleted there")
        case .success(.kept(let fetched, let need?)):
            DaemonLog.info("\(file): \(fetched) of the \(need) members that fetch it from relay \(relay) have it; it stays there")
        case .success(.kept(_, nil)):
            DaemonLog.info("\(file): relay \(relay) holds no count of the members that need it; it stays there until its age limit")
        case .failure(let error):
            DaemonLog.warning("\(file) stays on relay \(relay) until its age limit (30 days): marking it fetched failed: \(error)")
        }
    }

    // MARK: Recording

    /// Writes the message's state; false when the message is gone (or the write failed).
    private func record(_ messageId: String, _ state: DBAttachmentTransfer.State, bytesDone: Int, failure: String? = nil) async -> Bool {
        (try? await database.write { conn in
            try AttachmentTransferWriter.record(messageId: messageId, state, bytesDone: Int64(bytesDone), failure: failure, on: conn)
        }) ?? false
    }

    /// Records `failed` and says so; a message gone meanwhile is `notFound`.
    private func record(_ messageId: String, failure: String) async -> Outcome {
        DaemonLog.warning("attachment of message \(messageId.prefix(8)) not fetched: \(failure)")
        return await record(messageId, .failed, bytesDone: 0, failure: failure) ? .failed(failure) : .notFound
    }
}
