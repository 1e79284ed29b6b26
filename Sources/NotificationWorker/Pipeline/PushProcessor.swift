import Glibc
import SharedStore

/// Where a push becomes a stored message: decode the payload, find that one identity by
/// clientId, open the envelope and verify the signature (`PushOpener`), then write it with
/// `IncomingMessageWriter` in one IMMEDIATE transaction, durable (synchronous=FULL) before
/// the ack. A rejected push writes nothing.
///
/// ```swift
/// let processor = PushProcessor(options: options,
///                               environment: ProcessEnvironment.current(only: PushProcessor.environmentNames))
/// let outcome = processor.handle(connection.readPayload())
/// ```
final class PushProcessor {
    /// The environment variables the worker reads (directories, busy budget, credentials).
    static let environmentNames = ["SOTTO_GROUP_DIR", "XDG_DATA_HOME", "HOME", "SOTTO_RUNTIME_DIR",
                                   "XDG_RUNTIME_DIR", ConnectionProfile.busyTimeoutVariable,
                                   "CREDENTIALS_DIRECTORY", WALReset.variable]

    private let group: GroupDirectory
    private let runtime: RuntimeDirectory
    private let environment: [String: String]
    private var keystore: Keystore?
    /// Opening the database (and SQLite parsing the schema) takes ~0.35 ms: it starts on a
    /// second thread at launch and overlaps with reading and decrypting the push.
    private let databaseOpener: DatabaseOpener
    private let walReset: WALReset

    init(options: WorkerOptions, environment: [String: String]) {
        self.group = GroupDirectory.resolve(explicit: options.groupDirectory, environment: environment)
        self.runtime = RuntimeDirectory.resolve(environment: environment)
        self.environment = environment
        self.databaseOpener = DatabaseOpener(path: group.databasePath, profile: .worker(environment: environment))
        self.walReset = WALReset(environment: environment)
    }

    func handle(_ read: PushConnection.ReadResult) -> PushOutcome {
        switch read {
        case .payload(let bytes): return handle(payload: bytes)
        case .tooLarge: return .rejected(.payloadTooLarge, "payload over \(PushFrame.maxPayloadBytes) bytes")
        case .timeout: return .rejected(.timeout, "no payload within 5 s")
        case .failed(let code): return .rejected(.internal, "read failed: errno \(code)")
        }
    }

    func handle(payload: [UInt8]) -> PushOutcome {
        let opened: OpenedPush
        do {
            // The keystore is opened only once the payload has decoded: garbage costs no I/O.
            opened = try PushOpener.open(payload) { (clientId) throws(KeystoreError) in
                try self.openKeystore().identity(clientId: clientId)
            }
        } catch {
            WorkerLog.info("push rejected: \(error.code.rawValue)")
            return PushOutcome(ack: .error(error), afterAck: {})
        }

        let messageId = opened.message.id
        let outcome: IncomingWriteOutcome
        do {
            let conn = try database()
            outcome = try conn.immediateTransaction { () throws(IncomingWriteError) in
                try IncomingMessageWriter.write(IncomingMessage(opened), recipientInboxId: opened.recipientInboxId,
                                                topic: opened.payload.topic, now: WallClock.nowMs(), on: conn)
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
            let runtime = self.runtime
            let content = opened.content
            let (opener, walReset) = (databaseOpener, self.walReset)
            return PushOutcome(ack: .ok(messageId: messageId, duplicate: false)) {
                DaemonSignal(socketPath: runtime.eventsSocketPath).send(seq: receipt.seq)
                if let notification = NotificationText.make(for: content, receipt: receipt) {
                    let result = DesktopNotifier().post(summary: notification.summary, body: notification.body)
                    if case .failed(let reason) = result { WorkerLog.info("notification not shown: \(reason)") }
                }
                // Last, after the ack: the WAL reset never delays a sender (docs/adr/0020).
                if let wal = opener.closeIfWALIsDue(walReset), wal.after < wal.before {
                    WorkerLog.info("alone: WAL checkpointed on close, \(wal.before) -> \(wal.after) bytes")
                }
            }
        }
    }

    // MARK: - Resources, opened once per process

    private func openKeystore() throws(KeystoreError) -> Keystore {
        if let keystore { return keystore }
        let opened = try Keystore(directory: group.keystorePath, environment: environment)
        keystore = opened
        return opened
    }

    /// The connection opened in the background (reused under Accept=no).
    private func database() throws(StoreError) -> SQLiteConnection {
        try databaseOpener.connection()
    }

    private func rejected(_ error: IncomingWriteError) -> PushOutcome {
        let code = PushErrorCode(rawValue: error.protocolCode) ?? .internal
        let detail: String
        switch error {
        case .unknownConversation: detail = "no such conversation for this inbox and topic"
        case .conversationExpired: detail = "the conversation has exploded"
        case .unknownSender: detail = "sender is not a member of the conversation"
        case .store(.busy): detail = "database locked past the busy timeout"
        case .store(.schemaTooNew(let found, let known)): detail = "database schema \(found) is newer than this worker's \(known)"
        case .store(.schemaMissing): detail = "database not initialised; start the daemon"
        case .store: detail = "storage error"
        }
        WorkerLog.info("push rejected: \(code.rawValue)")
        return .rejected(code, detail)
    }
}
