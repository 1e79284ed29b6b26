import Glibc
import SharedStore
import SottoCrypto
import SottoWire

/// Where a push becomes a stored message: decode the payload, find that one identity by
/// clientId, open the envelope and verify the signature (`PushOpener`), then write it with
/// `IncomingMessageWriter` in one IMMEDIATE transaction, durable (synchronous=FULL) before
/// the ack. A rejected push writes nothing.
///
/// ```swift
/// let processor = PushProcessor(options: options,
///                               environment: ProcessEnvironment.current(only: PushProcessor.environmentNames))
/// let (first, rest) = connection.readFirstLine()
/// let outcome = processor.handle(first) { hint in connection.readBody(length: Int(hint.length), after: rest) }
/// ```
final class PushProcessor {
    /// The environment variables the worker reads (directories, busy budget, credentials).
    static let environmentNames = ["SOTTO_GROUP_DIR", "XDG_DATA_HOME", "HOME", "SOTTO_RUNTIME_DIR",
                                   "XDG_RUNTIME_DIR", ConnectionProfile.busyTimeoutVariable,
                                   "CREDENTIALS_DIRECTORY", WALReset.variable]

    let group: GroupDirectory
    private let runtime: RuntimeDirectory
    private let environment: [String: String]
    private var keystore: Keystore?
    /// The database keys of the identities this process opened: what it seals content with
    /// (docs/adr/0052). Gone with the process.
    let contentKeys = ContentKeyring()
    /// Opening the database (and SQLite parsing the schema) takes ~0.35 ms: it starts on a
    /// second thread at launch and overlaps with reading and decrypting the push.
    private let databaseOpener: DatabaseOpener
    /// `shared.sqlite.damaged`: while it exists no push is acked (docs/adr/0018).
    private let damage: DamageMarker
    /// The group directory's check (docs/adr/0019), made once per process.
    private lazy var directoryProblem: DirectoryError? = {
        do throws(DirectoryError) { try group.verify() } catch { return error }
        return nil
    }()
    /// Keeps its session-bus connection for the process's later pushes.
    private let notifier = DesktopNotifier()
    private let walReset: WALReset

    init(options: WorkerOptions, environment: [String: String]) {
        self.group = GroupDirectory.resolve(explicit: options.groupDirectory, environment: environment)
        self.runtime = RuntimeDirectory.resolve(environment: environment)
        self.environment = environment
        self.databaseOpener = DatabaseOpener(path: group.databasePath, profile: .worker(environment: environment))
        self.damage = DamageMarker(databasePath: group.databasePath)
        self.walReset = WALReset(environment: environment)
    }

    /// `readBody` reads the sealed body a payload names (docs/protocol/bodies.md §5); the
    /// default, for a caller with no stream to read from, finds none.
    func handle(_ read: PushRead,
                readBody: (BodyHint) -> PushConnection.BodyRead = { _ in .endedEarly }) -> PushOutcome {
        if let refusal = read.refusal { return PushOutcome(refusal: refusal) }
        guard case .payload(let bytes) = read else { return .rejected(.internal, "no payload") }  // every other read has a refusal
        return handle(payload: bytes, readBody: readBody)
    }

    func handle(payload bytes: [UInt8],
                readBody: (BodyHint) -> PushConnection.BodyRead = { _ in .endedEarly }) -> PushOutcome {
        let payload: PushPayload
        do {
            payload = try PushPayload.decode(bytes)
        } catch {
            WorkerLog.info("push rejected: \(error.code.rawValue)")
            return PushOutcome(ack: .error(error), afterAck: {})
        }
        var body: [UInt8]?
        if let hint = payload.body {
            switch readBody(hint) {
            case .bytes(let bytes): body = bytes
            case .endedEarly:
                // Also how relayd hands on a push whose body its relay no longer has: the
                // sender is told in a failed receipt (docs/protocol/receipts.md §4).
                recordFailedReceipt(payload, code: .bodyMissing)
                return refusedBody(PushError(.bodyMissing, "the stream ended before the body's \(hint.length) bytes"))
            case .timeout: return refusedBody(PushError(.timeout, "the body did not come within 5 s"))
            case .failed(let code): return refusedBody(PushError(.internal, "body read failed: errno \(code)"))
            }
        }
        let opened: OpenedPush
        switch open(payload, body: body) {
        case .success(let push): opened = push
        case .failure(let error):
            if error.code == .bodyMismatch { recordFailedReceipt(payload, code: .bodyMismatch) }
            return PushOutcome(ack: .error(error), afterAck: {})
        }
        if let refusal = storageRefusal() { return refusal }

        let messageId = opened.message.id
        let outcome: IncomingWriteOutcome
        do {
            let conn = try database()
            outcome = try conn.immediateTransaction { () throws(IncomingWriteError) in
                try write(opened, on: conn)
            }
        } catch let error as IncomingWriteError {
            return rejected(error)
        } catch let error as StoreError {
            return rejected(.store(error))
        } catch {
            return .rejected(.internal, "unexpected error")
        }

        switch outcome {
        case .duplicate:
            WorkerLog.info("push duplicate message=\(messageId)")
            return PushOutcome(ack: .ok(messageId: messageId, duplicate: true), afterAck: {})
        case .written(let receipt):
            WorkerLog.info("push stored message=\(messageId) seq=\(receipt.seq)")
            return PushOutcome(ack: .ok(messageId: messageId, duplicate: false)) {
                self.announce([StoredPush(receipt: receipt, content: opened.content)])
            }
        }
    }

    // MARK: - The steps of a push (shared with batches: PushProcessor+Batch)

    /// Decodes, finds the identity, opens and verifies: no database write. A refusal is logged.
    func open(_ payload: [UInt8]) -> Result<OpenedPush, PushError> {
        do {
            return open(try PushPayload.decode(payload), body: nil)
        } catch {
            WorkerLog.info("push rejected: \(error.code.rawValue)")
            return .failure(error)
        }
    }

    /// A decoded payload and the body that followed it (nil: none came).
    func open(_ payload: PushPayload, body: [UInt8]?) -> Result<OpenedPush, PushError> {
        do {
            // The keystore is opened only once the payload has decoded: garbage costs no I/O.
            let opened = try PushOpener.open(payload, body: body, identityForClientId: { (clientId) throws(KeystoreError) in
                let identity: Identity
                do throws(KeystoreError) {
                    identity = try self.openKeystore().identity(clientId: clientId)
                } catch .corrupt(let reason) {
                    // A power cut between a wipe's zeroing and its unlink brings the file back
                    // under its name, zeroed (docs/adr/0058): with its tombstone it is deleted, not damaged.
                    if self.isTombstoned(clientId) { throw .missing }
                    throw .corrupt(reason)
                }
                self.contentKeys.remember(identity)
                // ADR 0016: the inbox's rows are deleted and its files about to be (or, after a
                // crash, still to be) wiped: the identity no longer exists for a push.
                if self.isTombstoned(clientId) { throw .missing }
                return identity
            }, topicForClientId: { (clientId) throws(PushError) in try self.onlyTopic(clientId: clientId) })
            return .success(opened)
        } catch {
            WorkerLog.info("push rejected: \(error.code.rawValue)")
            return .failure(error)
        }
    }

    private func refusedBody(_ error: PushError) -> PushOutcome {
        WorkerLog.info("push rejected: \(error.code.rawValue)")
        return PushOutcome(ack: .error(error), afterAck: {})
    }

    /// After authentication, so only a member learns why: never ack a push into a group
    /// directory open to others (one lstat per process) or a file known to be damaged (one
    /// lstat per push, a few µs: docs/adr/0018, 0019).
    func storageRefusal() -> PushOutcome? {
        if let problem = directoryProblem {
            WorkerLog.error("push refused: \(problem)")
            return .rejected(.internal, "the device's data directory is not private; not stored, retry later")
        }
        if damage.isPresent {
            WorkerLog.error("push refused: " + DatabaseDamage.message(group: group, cause: damage.reason() ?? "marked damaged"))
            return .rejected(.internal, "the device's database is damaged; not stored, retry later")
        }
        return nil
    }

    /// Writes one opened push inside the caller's transaction.
    func write(_ opened: OpenedPush, on conn: SQLiteConnection) throws(IncomingWriteError) -> IncomingWriteOutcome {
        try IncomingMessageWriter.write(IncomingMessage(opened), recipientInboxId: opened.recipientInboxId,
                                        topic: opened.topic, now: WallClock.nowMs(), on: conn)
    }

    /// A push written by this process: what the after-ack work needs.
    struct StoredPush {
        let receipt: IncomingWriteReceipt
        let content: MessageContent
    }

    /// After the ack: one datagram to the daemon with the highest seq (its ChangeFeed reads
    /// change_log up to there, so one per commit is enough), the desktop notifications (handed
    /// to the daemon when it listens on `notifications.sock`, else posted here), and
    /// last the WAL reset, which never delays a sender (docs/adr/0020).
    func announce(_ stored: [StoredPush]) {
        guard let newest = stored.map(\.receipt.seq).max() else { return }
        DaemonSignal(socketPath: runtime.eventsSocketPath).send(seq: newest)
        for notification in NotificationText.coalesced(stored.map { ($0.content, $0.receipt) }) {
            // The running daemon posts it, so that clicking it reaches a process that is still there.
            let handedOver = NotificationDatagram(conversationId: notification.conversationId,
                                                  summary: notification.summary, body: notification.body).encode()
            if handedOver.count <= NotificationDatagram.maxBytes,
               UnixSocket.sendDatagram(handedOver, to: runtime.notificationsSocketPath) { continue }
            switch notifier.post(summary: notification.summary, body: notification.body) {
            case .failed(let reason): WorkerLog.info("notification not shown: \(reason)")
            case .noBusSocket(let path): WorkerLog.info("notification not shown: no session bus at \(path)")
            case .sent, .noBus: break
            }
        }
        if let wal = databaseOpener.closeIfWALIsDue(walReset), wal.after < wal.before {
            WorkerLog.info("alone: WAL checkpointed on close, \(wal.before) -> \(wal.after) bytes")
        }
    }

    // MARK: - Resources, opened once per process

    func openKeystore() throws(KeystoreError) -> Keystore {
        if let keystore { return keystore }
        let opened = try Keystore(directory: group.keystorePath, environment: environment)
        keystore = opened
        return opened
    }

    /// Whether the clientId's inbox was deleted (an `inbox_tombstone` row). A database that
    /// cannot be read answers no here: the write that follows reports that error.
    func isTombstoned(_ clientId: String) -> Bool {
        guard let conn = try? database() else { return false }
        return (try? TombstoneRepository.contains(clientId: clientId, on: conn)) ?? false
    }

    /// The topic of the identity's one conversation, for a push that omits it (a relay's:
    /// PROTOCOL §2). None (the unused inbox) or several: nil, which the opener rejects.
    func onlyTopic(clientId: String) throws(PushError) -> String? {
        do throws(StoreError) {
            let conversations = try ConversationRepository.forClient(clientId: clientId, on: try database())
            return conversations.count == 1 ? conversations[0].topic : nil
        } catch .busy {
            throw PushError(.busy, "database locked past the busy timeout")
        } catch {
            throw PushError(.internal, "storage error")
        }
    }

    /// The connection opened in the background (reused under Accept=no).
    func database() throws(StoreError) -> SQLiteConnection {
        let conn = try databaseOpener.connection()
        conn.contentKeys = contentKeys
        return conn
    }

    func rejected(_ error: IncomingWriteError) -> PushOutcome {
        let code = PushErrorCode(rawValue: error.protocolCode) ?? .internal
        let detail: String
        switch error {
        case .unknownConversation: detail = "no such conversation for this inbox and topic"
        case .conversationExpired: detail = "the conversation has exploded"
        case .unknownSender: detail = "sender is not a member of the conversation"
        case .notPermitted(let rule), .invalidContent(let rule), .unknownMessage(let rule): detail = rule
        case .store(.busy): detail = "database locked past the busy timeout"
        case .store(.schemaTooNew(let found, let known)): detail = "database schema \(found) is newer than this worker's \(known)"
        case .store(.schemaMissing): detail = "database not initialised; start the daemon"
        case .store(.corrupt(let code, let message, _)):
            let cause = "\(SQLiteResultCode.name(code)) in a worker's write: \(message)"
            damage.mark(cause)
            WorkerLog.error("push refused: " + DatabaseDamage.message(group: group, cause: cause))
            detail = "the device's database is damaged; not stored, retry later"
        case .store(.diskFull):
            WorkerLog.error("push refused: disk full: no space left on the file system holding \(group.databasePath); free some space")
            detail = "disk full on the receiving device; not stored, retry later"
        case .store(let error):
            WorkerLog.error("push refused: \(error)")  // the path and SQLite's words stay on this device
            detail = "storage error"
        }
        WorkerLog.info("push rejected: \(code.rawValue)")
        return .rejected(code, detail)
    }
}
