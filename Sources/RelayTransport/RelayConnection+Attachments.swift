import CNats
import SottoWire

// MARK: - The attachment stream (docs/protocol/attachment-relay.md)

extension RelayConnection {
    /// Makes sure the attachment stream exists: creates it from `stream` when missing; an
    /// existing one is used as it is (another device, or its operator, made it).
    public func ensureAttachmentStream(_ stream: AttachmentStream = AttachmentStream()) throws(RelayError) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let found = js_GetStreamInfo(&info, jetStream, AttachmentStream.streamName, nil, &jsError)
        if found == NATS_OK { jsStreamInfo_Destroy(info); return }
        guard found == NATS_NOT_FOUND else { throw NatsCall.error(found, "look up the attachment stream", jsError: jsError) }

        jsError = jsErrCode(0)
        let status = addStream(named: AttachmentStream.streamName, subjects: AttachmentStream.allSubjects, jsError: &jsError) { config in
            config.Retention = js_LimitsPolicy
            config.Storage = js_FileStorage
            config.Replicas = Int64(stream.replicas)
            config.MaxAge = stream.maxAgeMs * 1_000_000
            config.Duplicates = min(MailboxStream.duplicateWindowMs, stream.maxAgeMs) * 1_000_000
            config.MaxMsgSize = AttachmentStream.maxMessageBytes
            // First publish wins: one message per piece, a second one refused.
            config.MaxMsgsPerSubject = 1
            config.Discard = js_DiscardNew
            config.DiscardNewPerSubject = true
        }
        if status == NATS_OK { return }
        if js_GetStreamInfo(&info, jetStream, AttachmentStream.streamName, nil, nil) == NATS_OK { jsStreamInfo_Destroy(info); return }
        throw NatsCall.error(status, "create the attachment stream", jsError: jsError)
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
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var message: OpaquePointer?
        var jsError = jsErrCode(0)
        let status = js_GetLastMsg(&message, jetStream, AttachmentStream.streamName, subject, &options, &jsError)
        if status == NATS_NOT_FOUND || jsError == JSNoMessageFoundErr || jsError == JSStreamNotFoundErr { return nil }
        try NatsCall.check(status, "fetch attachment \(id.prefix(8)) piece \(piece)", jsError: jsError)
        guard let message else { return nil }
        defer { natsMsg_Destroy(message) }
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let data = natsMsg_GetData(message) else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: count))
    }

    /// The piece indices the relay holds for `id` (empty when none, or no stream).
    public func storedAttachmentPieces(id: String) throws(RelayError) -> Set<Int> {
        guard let filter = AttachmentStream.allPieces(id: id) else { return [] }
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let status = filter.withCString { filter in
            options.Stream.Info.SubjectsFilter = filter
            return js_GetStreamInfo(&info, jetStream, AttachmentStream.streamName, &options, &jsError)
        }
        if status == NATS_NOT_FOUND || jsError == JSStreamNotFoundErr { return [] }
        try NatsCall.check(status, "attachment stream info", jsError: jsError)
        guard let info else { return [] }
        defer { jsStreamInfo_Destroy(info) }
        guard let subjects = info.pointee.State.Subjects else { return [] }
        var pieces = Set<Int>()
        for index in 0..<Int(subjects.pointee.Count) {
            let entry = subjects.pointee.List[index]
            guard entry.Msgs > 0, let name = entry.Subject,
                  let piece = AttachmentStream.piece(inSubject: String(cString: name), id: id) else { continue }
            pieces.insert(piece)
        }
        return pieces
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
