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

    // MARK: Who still needs it (docs/protocol/attachment-relay.md §6)

    /// Says how many members fetch `id` from this relay (`sotto.att.<id>.need`); a `need` the
    /// relay already holds (the first one kept) is not an error.
    public func publishAttachmentNeed(id: String, count: Int) throws(RelayError) {
        guard let subject = AttachmentStream.needSubject(id: id), (1...AttachmentStream.maxNeed).contains(count) else {
            throw .call(operation: "publish an attachment's need", status: "not an attachment id and a count of 1 to \(AttachmentStream.maxNeed)", code: 0)
        }
        try publishKeptOnce(Array(String(count).utf8), subject: subject, messageId: "\(id).need",
                            operation: "publish attachment \(id.prefix(8))'s need")
    }

    /// The `need` the relay holds for `id`: nil when there is none or it is not a count
    /// (`AttachmentStream.need(from:)`).
    public func attachmentNeed(id: String) throws(RelayError) -> Int? {
        guard let subject = AttachmentStream.needSubject(id: id) else { return nil }
        return try keptMessage(stream: AttachmentStream.streamName, subject: subject,
                               operation: "read attachment \(id.prefix(8))'s need").flatMap(AttachmentStream.need(from:))
    }

    /// Marks that the member whose mark is `token` has `id` whole (an empty message under
    /// `sotto.att.<id>.got.<token>`); marking twice is not an error.
    public func markAttachmentFetched(id: String, token: String) throws(RelayError) {
        guard let subject = AttachmentStream.fetchedSubject(id: id, token: token) else {
            throw .call(operation: "mark an attachment fetched", status: "not an attachment id and a mark", code: 0)
        }
        try publishKeptOnce([], subject: subject, messageId: "\(id).got.\(token)", operation: "mark attachment \(id.prefix(8)) fetched")
    }

    /// How many members' marks the relay holds for `id`.
    public func attachmentFetchedCount(id: String) throws(RelayError) -> Int {
        guard let filter = AttachmentStream.allFetched(id: id) else { return 0 }
        return try keptSubjects(stream: AttachmentStream.streamName, filter: filter, operation: "attachment stream info").count
    }

    /// Publishes to a subject that keeps its first message; a publish refused because the
    /// subject holds one already counts as done.
    private func publishKeptOnce(_ bytes: [UInt8], subject: String, messageId: String, operation: String) throws(RelayError) {
        var jsError = jsErrCode(0)
        let (status, _) = try publishMessage(bytes, subject: subject, messageId: messageId, jsError: &jsError)
        guard status != NATS_OK else { return }
        if (try? keptMessage(stream: AttachmentStream.streamName, subject: subject, operation: operation)) != nil { return }
        throw NatsCall.error(status, operation, jsError: jsError)
    }

    /// Deletes every piece of `id` from the relay, and its `need` and marks (an explode, or
    /// the last member that needed it has it). Deleting what is not there is not an error.
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
