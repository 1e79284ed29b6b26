import CNats

/// One message fetched from a mailbox: its bytes, how often the relay has delivered it, and
/// the three ways to settle it. Settle each exactly once: `ack` after the device stored it,
/// `nak(delayMs:)` to get it again later, `terminate` when it can never be stored.
///
/// ```swift
/// switch outcome {
/// case .stored: try message.ack()                 // AckSync: waits for the relay's confirmation
/// case .retry:  try message.nak(delayMs: 2_000)
/// case .reject: try message.terminate()
/// }
/// ```
public final class RelayMessage {
    private let message: OpaquePointer
    private let apiWaitMs: Int64

    init(message: OpaquePointer, apiWaitMs: Int64) {
        self.message = message
        self.apiWaitMs = apiWaitMs
    }

    deinit { natsMsg_Destroy(message) }

    /// The message's bytes (a push, if the sender was honest).
    public var data: [UInt8] {
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let base = natsMsg_GetData(message) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// 1 on the first delivery, more on redeliveries (0 if the relay did not say).
    public var deliveries: UInt64 {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return 0 }
        defer { jsMsgMetaData_Destroy(meta) }
        return meta.pointee.NumDelivered
    }

    /// How many messages the consumer had not yet delivered when the relay sent this one (0:
    /// nothing waited behind it; redeliveries are not counted).
    public var pendingAfter: UInt64 {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return .max }
        defer { jsMsgMetaData_Destroy(meta) }
        return meta.pointee.NumPending
    }

    /// The stream sequence number (orders messages of one mailbox).
    public var streamSequence: UInt64 {
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        guard natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta else { return 0 }
        defer { jsMsgMetaData_Destroy(meta) }
        return meta.pointee.Sequence.Stream
    }

    /// AckSync: returns once the relay confirmed; the message is then gone from the mailbox.
    public func ack() throws(RelayError) {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var jsError = jsErrCode(0)
        try NatsCall.check(natsMsg_AckSync(message, &options, &jsError), "ack", jsError: jsError)
    }

    /// Ack without waiting for the relay's confirmation (one publish). Used for all but the
    /// last of a batch whose last is acked with `ack()`: a lost ack only means a redelivery.
    public func ackWithoutConfirmation() throws(RelayError) {
        try NatsCall.check(natsMsg_Ack(message, nil), "ack")
    }

    /// Redeliver no sooner than `delayMs` from now.
    public func nak(delayMs: Int64) throws(RelayError) {
        try NatsCall.check(natsMsg_NakWithDelay(message, delayMs, nil), "nak")
    }

    /// Never deliver again (the stream then drops it).
    public func terminate() throws(RelayError) {
        try NatsCall.check(natsMsg_Term(message, nil), "term")
    }
}
