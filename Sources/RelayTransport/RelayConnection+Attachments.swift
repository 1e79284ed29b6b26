import CNats
import SottoWire

// MARK: - The attachment stream (docs/protocol/attachment-relay.md)

extension RelayConnection {
    /// Makes sure the attachment stream exists: creates it from `stream` when missing; an
    /// existing one is used as it is (another device, or its operator, made it).
    public func ensureAttachmentStream(_ stream: AttachmentStream = AttachmentStream()) throws(RelayError) {
        try ensureKeptOnceStream(named: AttachmentStream.streamName, subjects: AttachmentStream.allSubjects,
                                 maxMessageBytes: AttachmentStream.maxMessageBytes, replicas: stream.replicas,
                                 maxAgeMs: stream.maxAgeMs, what: "attachment")
    }

    /// Publishes one piece (`Nats-Msg-Id` = `<id>.<index>`) and waits for the stream's ack. A
    /// piece the relay already holds (published before a restart) is `duplicate`, not an error.
    @discardableResult
    public func publishAttachmentPiece(_ bytes: [UInt8], id: String, piece: Int) throws(RelayError) -> PublishAck {
        guard let subject = AttachmentStream.subject(id: id, piece: piece) else {
            throw .call(operation: "publish an attachment piece", status: "not an attachment id and piece", code: 0)
        }
        var jsError = jsErrCode(0)
        let (status, ack) = try publishMessage(bytes, subject: subject, messageId: "\(id).\(piece)", jsError: &jsError)
        if status != NATS_OK {
            // Refused because the subject already holds a message: ours, from before.
            if (try? storedAttachmentPieces(id: id).contains(piece)) == true { return PublishAck(sequence: 0, duplicate: true) }
            throw NatsCall.error(status, "publish attachment \(id.prefix(8)) piece \(piece)", jsError: jsError)
        }
        guard let ack else { throw .call(operation: "publish an attachment piece", status: "no ack", code: 0) }
        return ack
    }

    /// The piece stored under `id` and `piece`, or nil when the relay has none (expired,
    /// deleted, never published, or no attachment stream). Throws when it could not be asked.
    public func attachmentPiece(id: String, piece: Int) throws(RelayError) -> [UInt8]? {
        guard let subject = AttachmentStream.subject(id: id, piece: piece) else { return nil }
        return try keptMessage(stream: AttachmentStream.streamName, subject: subject,
                               operation: "fetch attachment \(id.prefix(8)) piece \(piece)")
    }

    /// The piece indices the relay holds for `id` (empty when none, or no stream).
    public func storedAttachmentPieces(id: String) throws(RelayError) -> Set<Int> {
        guard let filter = AttachmentStream.allPieces(id: id) else { return [] }
        let kept = try keptSubjects(stream: AttachmentStream.streamName, filter: filter, operation: "attachment stream info")
        return Set(kept.compactMap { AttachmentStream.piece(inSubject: $0.subject, id: id) })
    }

    /// Deletes every piece of `id` from the relay (an explode, a leave, a removal: no
    /// ciphertext of it stays there). Deleting what is not there is not an error.
    public func deleteAttachment(id: String) throws(RelayError) {
        guard let filter = AttachmentStream.allPieces(id: id) else {
            throw .call(operation: "delete an attachment", status: "not an attachment id", code: 0)
        }
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var jsError = jsErrCode(0)
        let status = filter.withCString { subject in
            options.Stream.Purge.Subject = subject
            return js_PurgeStream(jetStream, AttachmentStream.streamName, &options, &jsError)
        }
        if status == NATS_NOT_FOUND || jsError == JSStreamNotFoundErr { return }
        try NatsCall.check(status, "delete attachment \(id.prefix(8))", jsError: jsError)
    }

    /// Bytes and messages the attachment stream holds (for the storage benchmark and tests).
    public func attachmentStreamUsage() throws(RelayError) -> (messages: UInt64, bytes: UInt64) {
        try streamUsage(AttachmentStream.streamName)
    }
}
