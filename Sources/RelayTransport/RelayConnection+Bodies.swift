import CNats
import SottoWire

// MARK: - The body stream (docs/protocol/bodies.md §6)

extension RelayConnection {
    /// Makes sure the body stream exists: creates it from `stream` when missing; an existing
    /// one is used as it is (another device, or its operator, made it).
    public func ensureBodyStream(_ stream: BodyStream = BodyStream()) throws(RelayError) {
        try ensureKeptOnceStream(named: BodyStream.streamName, subjects: BodyStream.allSubjects,
                                 maxMessageBytes: BodyStream.maxMessageBytes, replicas: stream.replicas,
                                 maxAgeMs: stream.maxAgeMs, what: "body")
    }

    /// Publishes one sealed body under its id (`Nats-Msg-Id` = the id) and waits for the
    /// stream's ack. A body the relay already holds (this device published it before a
    /// restart, past the duplicate window) is `duplicate`, not an error.
    @discardableResult
    public func publishBody(_ sealed: [UInt8], id: String) throws(RelayError) -> PublishAck {
        guard let subject = BodyStream.subject(id: id) else {
            throw .call(operation: "publish a body", status: "not a body id", code: 0)
        }
        var jsError = jsErrCode(0)
        let (status, ack) = try publishMessage(sealed, subject: subject, messageId: id, jsError: &jsError)
        if status != NATS_OK {
            // Refused because the subject already holds a message: ours, from before.
            if (try? storedBodyCount(id: id)) == 1 { return PublishAck(sequence: 0, duplicate: true) }
            throw NatsCall.error(status, "publish body \(id.prefix(8))", jsError: jsError)
        }
        guard let ack else { throw .call(operation: "publish a body", status: "no ack", code: 0) }
        return ack
    }

    /// Whether the relay holds the body (without fetching it).
    public func hasBody(id: String) throws(RelayError) -> Bool {
        try storedBodyCount(id: id) > 0
    }

    /// The sealed body stored under `id`, or nil when the relay has none (expired, never
    /// published, or no body stream at all). Throws when the relay could not be asked.
    public func body(id: String) throws(RelayError) -> [UInt8]? {
        guard let subject = BodyStream.subject(id: id) else { return nil }
        return try keptMessage(stream: BodyStream.streamName, subject: subject, operation: "fetch body \(id.prefix(8))")
    }

    /// Messages stored under the body's subject: 0 or 1.
    func storedBodyCount(id: String) throws(RelayError) -> UInt64 {
        guard let subject = BodyStream.subject(id: id) else { return 0 }
        return try keptSubjects(stream: BodyStream.streamName, filter: subject, operation: "body stream info")
            .reduce(0) { $0 + $1.messages }
    }

    /// Bytes and messages the body stream holds (for the storage benchmark and tests).
    public func bodyStreamUsage() throws(RelayError) -> (messages: UInt64, bytes: UInt64) {
        try streamUsage(BodyStream.streamName)
    }
}
