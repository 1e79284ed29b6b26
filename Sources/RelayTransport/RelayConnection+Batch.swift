import CNats
import Synchronization

/// One push of a batch: the sealed payload, the mailbox it goes to, its `Nats-Msg-Id`.
///
/// ```swift
/// let push = BatchPush(payload: payload, mailbox: try Mailbox(clientId: id), messageId: RelayPublisher.messageId(for: payload))
/// ```
public struct BatchPush: Sendable {
    public let payload: [UInt8]
    public let mailbox: Mailbox
    public let messageId: String

    public init(payload: [UInt8], mailbox: Mailbox, messageId: String) {
        self.payload = payload
        self.mailbox = mailbox
        self.messageId = messageId
    }
}

// MARK: - Publishing many pushes with a bounded window (docs/adr/0041)

extension RelayConnection {
    /// How many publishes of a batch may wait for their ack at once.
    public static let defaultPublishWindow = 256

    /// Publishes every push (each padded, docs/protocol/relay-padding.md) without waiting for each ack before the next (JetStream's async
    /// publish, at most `window` unacked at a time), then waits for all acks, at most the
    /// connection's API wait. One result per push, in order: its ack, or why it has none (a
    /// push without an ack may or may not be stored: its retry carries the same
    /// `Nats-Msg-Id`, so the stream drops a second copy). A fan-out to 1,000 members costs
    /// about one round trip instead of 1,000.
    ///
    /// ```swift
    /// for (push, result) in zip(pushes, relay.publishAll(pushes)) {
    ///     if case .success(let ack) = result { … relayed … } else { … retry later … }
    /// }
    /// ```
    public func publishAll(_ pushes: [BatchPush], window: Int = RelayConnection.defaultPublishWindow)
        -> [Result<PublishAck, RelayError>] {
        guard pushes.count > 1 else {
            // One push: the connection's own context, whose reply subscription exists already
            // (a fresh publishing context subscribes first: a few ms for a one-member send).
            return pushes.map { push in
                Result { () throws(RelayError) in try publish(push.payload, to: push.mailbox, messageId: push.messageId) }
            }
        }
        let acks = BatchAcks(pushes: pushes)
        let closure = Unmanaged.passRetained(acks).toOpaque()
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        options.PublishAsync.MaxPending = Int64(max(1, window))
        options.PublishAsync.StallWait = apiWaitMs
        options.PublishAsync.AckHandlerClosure = closure
        options.PublishAsync.AckHandler = { _, message, ack, failure, closure in
            defer { natsMsg_Destroy(message) }
            guard let closure, let message else { return }
            let acks = Unmanaged<BatchAcks>.fromOpaque(closure).takeUnretainedValue()
            var id: UnsafePointer<CChar>?
            guard natsMsgHeader_Get(message, "Nats-Msg-Id", &id) == NATS_OK, let id else { return }
            if let ack {
                acks.record(String(cString: id), .success(PublishAck(sequence: ack.pointee.Sequence,
                                                                     duplicate: ack.pointee.Duplicate)))
            } else if let failure {
                acks.record(String(cString: id), .failure(NatsCall.error(failure.pointee.Err, "publish",
                                                                         jsError: failure.pointee.ErrCode)))
            }
        }
        var context: OpaquePointer?
        let created = natsConnection_JetStream(&context, connection, &options)
        guard created == NATS_OK, let context else {
            Unmanaged<BatchAcks>.fromOpaque(closure).release()
            return pushes.map { _ in .failure(NatsCall.error(created, "a publishing context")) }
        }
        // The first publish the client refuses (the connection is gone, or the window stayed
        // full for the whole wait) ends the batch: the rest would each wait as long.
        // A push that cannot be padded (docs/protocol/relay-padding.md) fails alone.
        var accepted = 0
        for (index, push) in pushes.enumerated() {
            let frame: [UInt8]
            do throws(RelayError) { frame = try Self.frame(push.payload) } catch {
                acks.fail(index, error)
                continue
            }
            let refused: RelayError? = isConnected ? publishAsync(push, frame: frame, on: context)
                : .call(operation: "publish", status: "the relay connection is down", code: 0)
            guard let refused else { accepted += 1; continue }
            for rest in index..<pushes.count { acks.fail(rest, refused) }
            break
        }
        var wait = jsPubOptions()
        jsPubOptions_Init(&wait)
        wait.MaxWait = apiWaitMs
        // Whatever is still unacked after the wait is taken back, so that no callback comes
        // after this (libnats 3.4 crashes asking a context that never published for its list).
        if accepted > 0, js_PublishAsyncComplete(context, &wait) != NATS_OK {
            var pending = natsMsgList()
            if js_PublishAsyncGetPendingList(&pending, context) == NATS_OK { natsMsgList_Destroy(&pending) }
        }
        jsCtx_Destroy(context)
        Unmanaged<BatchAcks>.fromOpaque(closure).release()
        return acks.results()
    }

    private func publishAsync(_ push: BatchPush, frame: [UInt8], on context: OpaquePointer) -> RelayError? {
        var message: OpaquePointer?
        let created = frame.withUnsafeBufferPointer { buffer in
            natsMsg_Create(&message, push.mailbox.subject, nil,
                           buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                           Int32(buffer.count))
        }
        guard created == NATS_OK, message != nil else { return NatsCall.error(created, "create a message") }
        defer { natsMsg_Destroy(message) }  // no effect once the library took it
        let header = natsMsgHeader_Set(message, "Nats-Msg-Id", push.messageId)
        guard header == NATS_OK else { return NatsCall.error(header, "set Nats-Msg-Id") }
        let status = js_PublishMsgAsync(context, &message, nil)
        return status == NATS_OK ? nil : NatsCall.error(status, "publish to \(push.mailbox)")
    }
}

/// The acks of one `publishAll`, filled in by the client's callback thread.
private final class BatchAcks: Sendable {
    private let indexById: [String: [Int]]
    private let slots: Mutex<[Result<PublishAck, RelayError>?]>

    init(pushes: [BatchPush]) {
        var indexById: [String: [Int]] = [:]
        for (index, push) in pushes.enumerated() { indexById[push.messageId, default: []].append(index) }
        self.indexById = indexById
        slots = Mutex(Array(repeating: nil, count: pushes.count))
    }

    func record(_ messageId: String, _ result: Result<PublishAck, RelayError>) {
        guard let indices = indexById[messageId] else { return }
        slots.withLock { slots in for index in indices where slots[index] == nil { slots[index] = result } }
    }

    func fail(_ index: Int, _ error: RelayError) {
        slots.withLock { $0[index] = .failure(error) }
    }

    func results() -> [Result<PublishAck, RelayError>] {
        slots.withLock { slots in
            slots.map { $0 ?? .failure(.call(operation: "publish", status: "no ack", code: 0)) }
        }
    }
}
