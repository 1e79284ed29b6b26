import CNats
import SottoWire

// MARK: - The body stream (docs/protocol/bodies.md §6)

extension RelayConnection {
    /// Makes sure the body stream exists: creates it from `stream` when missing; an existing
    /// one is used as it is (another device, or its operator, made it).
    public func ensureBodyStream(_ stream: BodyStream = BodyStream()) throws(RelayError) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let found = js_GetStreamInfo(&info, jetStream, BodyStream.streamName, nil, &jsError)
        if found == NATS_OK { jsStreamInfo_Destroy(info); return }
        guard found == NATS_NOT_FOUND else { throw NatsCall.error(found, "look up the body stream", jsError: jsError) }

        jsError = jsErrCode(0)
        let status = addStream(named: BodyStream.streamName, subjects: BodyStream.allSubjects, jsError: &jsError) { config in
            config.Retention = js_LimitsPolicy
            config.Storage = js_FileStorage
            config.Replicas = Int64(stream.replicas)
            config.MaxAge = stream.maxAgeMs * 1_000_000
            config.Duplicates = min(MailboxStream.duplicateWindowMs, stream.maxAgeMs) * 1_000_000
            config.MaxMsgSize = BodyStream.maxMessageBytes
            // First publish wins: one message per body, a second one refused.
            config.MaxMsgsPerSubject = 1
            config.Discard = js_DiscardNew
            config.DiscardNewPerSubject = true
        }
        if status == NATS_OK { return }
        // Another device created it in between: fine.
        if js_GetStreamInfo(&info, jetStream, BodyStream.streamName, nil, nil) == NATS_OK { jsStreamInfo_Destroy(info); return }
        throw NatsCall.error(status, "create the body stream", jsError: jsError)
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
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var message: OpaquePointer?
        var jsError = jsErrCode(0)
        let status = js_GetLastMsg(&message, jetStream, BodyStream.streamName, subject, &options, &jsError)
        if status == NATS_NOT_FOUND || jsError == JSNoMessageFoundErr || jsError == JSStreamNotFoundErr { return nil }
        try NatsCall.check(status, "fetch body \(id.prefix(8))", jsError: jsError)
        guard let message else { return nil }
        defer { natsMsg_Destroy(message) }
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let data = natsMsg_GetData(message) else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// Messages stored under the body's subject: 0 or 1.
    func storedBodyCount(id: String) throws(RelayError) -> UInt64 {
        guard let subject = BodyStream.subject(id: id) else { return 0 }
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let status = subject.withCString { filter in
            options.Stream.Info.SubjectsFilter = filter
            return js_GetStreamInfo(&info, jetStream, BodyStream.streamName, &options, &jsError)
        }
        if status == NATS_NOT_FOUND || jsError == JSStreamNotFoundErr { return 0 }
        try NatsCall.check(status, "body stream info", jsError: jsError)
        guard let info else { return 0 }
        defer { jsStreamInfo_Destroy(info) }
        guard let subjects = info.pointee.State.Subjects else { return 0 }
        var count: UInt64 = 0
        for index in 0..<Int(subjects.pointee.Count) { count += subjects.pointee.List[index].Msgs }
        return count
    }

    /// Bytes and messages the body stream holds (for the storage benchmark and tests).
    public func bodyStreamUsage() throws(RelayError) -> (messages: UInt64, bytes: UInt64) {
        try streamUsage(BodyStream.streamName)
    }
}
