import CNats

/// The JetStream ack of a publish: the stream stored the message (on a 3-node stream, a
/// majority did) under `sequence`; `duplicate` when its `Nats-Msg-Id` was already seen
/// within the stream's duplicate window, so it was not stored twice.
///
/// ```swift
/// let ack = try relay.publish(payload, to: box, messageId: id)
/// if ack.duplicate { /* already on the relay */ }
/// ```
public struct PublishAck: Sendable, Equatable {
    public let sequence: UInt64
    public let duplicate: Bool
}

/// How many messages a mailbox's consumer still has for its device.
///
/// ```swift
/// let state = try relay.consumerState(box)   // nil: no consumer
/// state?.pending; state?.ackPending
/// ```
public struct ConsumerState: Sendable, Equatable {
    /// Stored and not yet delivered.
    public let pending: UInt64
    /// Delivered and not yet acked (or terminated).
    public let ackPending: Int64
    /// Delivered more than once.
    public let redelivered: Int64
    /// How long the relay waits for an ack before it redelivers (the consumer's own setting).
    public var ackWaitMs: Int64 = 0
}

// MARK: - The mailbox stream (docs/adr/0026)

extension RelayConnection {
    /// Makes sure the mailbox stream exists with an age limit: creates it from `stream` if it
    /// is missing; a stream made without an age limit (before docs/adr/0030) gets
    /// `stream.maxAgeMs` added, its other settings (replicas first) kept. An age limit already
    /// there, ours or its operator's, is left alone. Throws only when the stream can be
    /// neither found nor created; a refused update is `.ageLimitRefused`, not an error.
    @discardableResult
    public func ensureStream(_ stream: MailboxStream = MailboxStream()) throws(RelayError) -> MailboxStreamCheck {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let found = js_GetStreamInfo(&info, jetStream, Mailbox.streamName, nil, &jsError)
        if found == NATS_OK, let info {
            defer { jsStreamInfo_Destroy(info) }
            return addAgeLimitIfMissing(info, stream: stream)
        }
        guard found == NATS_NOT_FOUND else { throw NatsCall.error(found, "look up the mailbox stream", jsError: jsError) }

        jsError = jsErrCode(0)
        let status = addStream(named: Mailbox.streamName, subjects: Mailbox.allSubjects, jsError: &jsError) { config in
            config.Retention = js_WorkQueuePolicy
            config.Storage = js_FileStorage
            config.Replicas = Int64(stream.replicas)
            config.Duplicates = stream.effectiveDuplicateWindowMs * 1_000_000
            config.MaxAge = stream.maxAgeMs * 1_000_000
            config.MaxMsgSize = MailboxStream.maxMessageBytes
        }
        if status == NATS_OK { return .created }
        // Another device created it in between: fine.
        if js_GetStreamInfo(&info, jetStream, Mailbox.streamName, nil, nil) == NATS_OK, let info {
            defer { jsStreamInfo_Destroy(info) }
            return addAgeLimitIfMissing(info, stream: stream)
        }
        throw NatsCall.error(status, "create the mailbox stream", jsError: jsError)
    }

    /// Creates stream `name` over `subjects`, with the settings `configure` makes on a
    /// default configuration; the caller decides what a failure means (another device may have
    /// created it in between).
    func addStream(named name: String, subjects: String, jsError: inout jsErrCode,
                   _ configure: (inout jsStreamConfig) -> Void) -> natsStatus {
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        configure(&config)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var error = jsErrCode(0)
        let status = name.withCString { name in
            subjects.withCString { subject in
                var list: [UnsafePointer<CChar>?] = [subject]
                return list.withUnsafeMutableBufferPointer { list in
                    config.Name = name
                    config.Subjects = list.baseAddress
                    config.SubjectsLen = 1
                    return js_AddStream(&info, jetStream, &config, nil, &error)
                }
            }
        }
        jsError = error
        if let info { jsStreamInfo_Destroy(info) }
        return status
    }

    /// The existing stream's configuration with `MaxAge` set, when it had none (0).
    private func addAgeLimitIfMissing(_ info: UnsafeMutablePointer<jsStreamInfo>, stream: MailboxStream) -> MailboxStreamCheck {
        guard let existing = info.pointee.Config else { return .ageLimitRefused("the relay sent no stream configuration") }
        if existing.pointee.MaxAge > 0 || stream.maxAgeMs <= 0 { return .found(maxAgeMs: existing.pointee.MaxAge / 1_000_000) }
        var config = existing.pointee  // its strings stay owned by `info`, alive until we return
        config.MaxAge = stream.maxAgeMs * 1_000_000
        config.Duplicates = min(config.Duplicates, config.MaxAge)
        var updated: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let status = js_UpdateStream(&updated, jetStream, &config, nil, &jsError)
        guard status == NATS_OK else {
            return .ageLimitRefused(NatsCall.error(status, "add an age limit to the mailbox stream", jsError: jsError).description)
        }
        jsStreamInfo_Destroy(updated)
        return .ageLimitAdded(maxAgeMs: stream.maxAgeMs)
    }

    /// A stream's maximum age in milliseconds (the mailbox stream's unless named); 0 when it has none.
    public func streamMaxAgeMs(_ streamName: String = Mailbox.streamName) throws(RelayError) -> Int64 {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        try NatsCall.check(js_GetStreamInfo(&info, jetStream, streamName, nil, &jsError), "stream info",
                           jsError: jsError)
        guard let info else { return 0 }
        defer { jsStreamInfo_Destroy(info) }
        return (info.pointee.Config?.pointee.MaxAge ?? 0) / 1_000_000
    }

    /// Publishes one push into `mailbox`, padded to `RelayPadding.frameBytes`
    /// (docs/protocol/relay-padding.md), with `Nats-Msg-Id: messageId`, and waits for the
    /// stream's ack. Throws when no ack came (the relay is down or did not store it), or for
    /// a push that cannot be padded (empty, or over 4,096 bytes). `padded: false` publishes
    /// the bytes as they are: only tests, playing a sender that does not pad.
    public func publish(_ payload: [UInt8], to mailbox: Mailbox, messageId: String, padded: Bool = true) throws(RelayError) -> PublishAck {
        var jsError = jsErrCode(0)
        let bytes = padded ? try Self.frame(payload) : payload
        let (status, ack) = try publishMessage(bytes, subject: mailbox.subject, messageId: messageId, jsError: &jsError)
        try NatsCall.check(status, "publish to \(mailbox)", jsError: jsError)
        guard let ack else { throw .call(operation: "publish", status: "no ack", code: 0) }
        return ack
    }

    /// `push` padded for a mailbox, or the reason it cannot be.
    static func frame(_ push: [UInt8]) throws(RelayError) -> [UInt8] {
        do throws(RelayPadding.Failure) {
            return try RelayPadding.pad(push)
        } catch {
            throw .call(operation: "pad the push", status: error.description, code: 0)
        }
    }

    /// Publishes `bytes` on `subject` with `Nats-Msg-Id: messageId` and waits for the stream's
    /// ack. Throws only when the message cannot be built; the publish's own status is returned
    /// for the caller to judge (with the ack when it is OK).
    func publishMessage(_ bytes: [UInt8], subject: String, messageId: String,
                        jsError: inout jsErrCode) throws(RelayError) -> (natsStatus, PublishAck?) {
        var message: OpaquePointer?
        let created = bytes.withUnsafeBufferPointer { buffer in
            natsMsg_Create(&message, subject, nil,
                           buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                           Int32(buffer.count))
        }
        try NatsCall.check(created, "create a message")
        guard let message else { throw .call(operation: "create a message", status: "no memory", code: 0) }
        defer { natsMsg_Destroy(message) }
        try NatsCall.check(natsMsgHeader_Set(message, "Nats-Msg-Id", messageId), "set Nats-Msg-Id")
        var ack: UnsafeMutablePointer<jsPubAck>?
        let status = js_PublishMsg(&ack, jetStream, message, nil, &jsError)
        guard status == NATS_OK, let ack else { return (status, nil) }
        defer { jsPubAck_Destroy(ack) }
        return (status, PublishAck(sequence: ack.pointee.Sequence, duplicate: ack.pointee.Duplicate))
    }

    /// Deletes every message stored for `mailbox` (after an explode or an inbox deletion, so
    /// no ciphertext of it stays on the relay).
    public func purge(_ mailbox: Mailbox) throws(RelayError) {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var jsError = jsErrCode(0)
        let status = mailbox.subject.withCString { subject in
            options.Stream.Purge.Subject = subject
            return js_PurgeStream(jetStream, Mailbox.streamName, &options, &jsError)
        }
        try NatsCall.check(status, "purge \(mailbox)", jsError: jsError)
    }

    /// Messages stored in the stream for `mailbox` (all mailboxes when nil).
    public func storedCount(_ mailbox: Mailbox? = nil) throws(RelayError) -> UInt64 {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let subject = mailbox?.subject ?? Mailbox.allSubjects
        let status = subject.withCString { filter in
            options.Stream.Info.SubjectsFilter = filter
            return js_GetStreamInfo(&info, jetStream, Mailbox.streamName, &options, &jsError)
        }
        try NatsCall.check(status, "stream info", jsError: jsError)
        guard let info else { return 0 }
        defer { jsStreamInfo_Destroy(info) }
        guard mailbox != nil else { return info.pointee.State.Msgs }
        guard let subjects = info.pointee.State.Subjects else { return 0 }
        var count: UInt64 = 0
        for index in 0..<Int(subjects.pointee.Count) { count += subjects.pointee.List[index].Msgs }
        return count
    }

    /// How many messages the mailbox stream holds for each mailbox that has any, by subject
    /// (`sotto.mb.<clientId>`): what a fan-out left on the relay, member by member.
    ///
    /// ```swift
    /// let counts = try relay.storedCountsByMailbox()
    /// counts[Mailbox(clientId: id).subject]   // 1: stored once
    /// ```
    public func storedCountsByMailbox() throws(RelayError) -> [String: UInt64] {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let status = Mailbox.allSubjects.withCString { filter in
            options.Stream.Info.SubjectsFilter = filter
            return js_GetStreamInfo(&info, jetStream, Mailbox.streamName, &options, &jsError)
        }
        if status == NATS_NOT_FOUND || jsError == JSStreamNotFoundErr { return [:] }
        try NatsCall.check(status, "stream info", jsError: jsError)
        guard let info else { return [:] }
        defer { jsStreamInfo_Destroy(info) }
        guard let subjects = info.pointee.State.Subjects else { return [:] }
        var counts: [String: UInt64] = [:]
        for index in 0..<Int(subjects.pointee.Count) {
            let entry = subjects.pointee.List[index]
            guard let subject = entry.Subject else { continue }
            counts[String(cString: subject), default: 0] += entry.Msgs
        }
        return counts
    }

    /// The frames the mailbox stream holds for `mailbox`, oldest first, read by sequence
    /// without consuming them (its consumer and what it has delivered are untouched): what the
    /// relay stores for that identity, for inspection.
    ///
    /// ```swift
    /// let frames = try relay.storedMessages(bob)   // each a padded frame: RelayPadding.unpad
    /// ```
    public func storedMessages(_ mailbox: Mailbox) throws(RelayError) -> [[UInt8]] {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        try NatsCall.check(js_GetStreamInfo(&info, jetStream, Mailbox.streamName, nil, &jsError), "stream info", jsError: jsError)
        guard let info else { return [] }
        let (first, last) = (info.pointee.State.FirstSeq, info.pointee.State.LastSeq)
        jsStreamInfo_Destroy(info)
        guard first > 0, last >= first else { return [] }
        var frames: [[UInt8]] = []
        for sequence in first...last {
            var message: OpaquePointer?
            let status = js_GetMsg(&message, jetStream, Mailbox.streamName, sequence, nil, &jsError)
            if status == NATS_NOT_FOUND || jsError == JSNoMessageFoundErr { continue }  // acked or terminated: gone
            try NatsCall.check(status, "get message \(sequence)", jsError: jsError)
            guard let message else { continue }
            defer { natsMsg_Destroy(message) }
            guard let subject = natsMsg_GetSubject(message), String(cString: subject) == mailbox.subject else { continue }
            let count = Int(natsMsg_GetDataLength(message))
            guard count > 0, let data = natsMsg_GetData(message) else { frames.append([]); continue }
            frames.append(Array(UnsafeRawBufferPointer(start: data, count: count)))
        }
        return frames
    }

    /// Messages and bytes a stream holds; (0, 0) when it does not exist.
    public func streamUsage(_ streamName: String = Mailbox.streamName) throws(RelayError) -> (messages: UInt64, bytes: UInt64) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let status = js_GetStreamInfo(&info, jetStream, streamName, nil, &jsError)
        if status == NATS_NOT_FOUND || jsError == JSStreamNotFoundErr { return (0, 0) }
        try NatsCall.check(status, "stream info", jsError: jsError)
        guard let info else { return (0, 0) }
        defer { jsStreamInfo_Destroy(info) }
        return (info.pointee.State.Msgs, info.pointee.State.Bytes)
    }

    /// The name of the server that leads the mailbox stream (nil on a single node).
    public func streamLeader() throws(RelayError) -> String? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        try NatsCall.check(js_GetStreamInfo(&info, jetStream, Mailbox.streamName, nil, &jsError), "stream info",
                           jsError: jsError)
        guard let info else { return nil }
        defer { jsStreamInfo_Destroy(info) }
        return info.pointee.Cluster?.pointee.Leader.map { String(cString: $0) }
    }

    // MARK: - Consumers

    /// The mailbox's durable consumer, or nil if it has none.
    public func consumerState(_ mailbox: Mailbox) throws(RelayError) -> ConsumerState? {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var jsError = jsErrCode(0)
        let status = js_GetConsumerInfo(&info, jetStream, Mailbox.streamName, mailbox.durable, nil, &jsError)
        // No consumer, or no stream at all (a relay that lost its store).
        if status == NATS_NOT_FOUND || jsError == JSConsumerNotFoundErr || jsError == JSStreamNotFoundErr { return nil }
        try NatsCall.check(status, "consumer info for \(mailbox)", jsError: jsError)
        guard let info else { return nil }
        defer { jsConsumerInfo_Destroy(info) }
        var state = ConsumerState(pending: info.pointee.NumPending, ackPending: info.pointee.NumAckPending,
                                  redelivered: info.pointee.NumRedelivered)
        state.ackWaitMs = (info.pointee.Config?.pointee.AckWait ?? 0) / 1_000_000
        return state
    }

    /// Deletes the mailbox's durable consumer; one that does not exist is not an error.
    public func deleteConsumer(_ mailbox: Mailbox) throws(RelayError) {
        var jsError = jsErrCode(0)
        let status = js_DeleteConsumer(jetStream, Mailbox.streamName, mailbox.durable, nil, &jsError)
        if status == NATS_NOT_FOUND { return }
        try NatsCall.check(status, "delete the consumer of \(mailbox)", jsError: jsError)
    }
}
