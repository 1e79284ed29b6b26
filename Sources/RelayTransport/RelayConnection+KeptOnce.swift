import CNats

// MARK: - Streams that keep the first message per subject (bodies, attachment pieces)

extension RelayConnection {
    /// Makes sure a stream that keeps one message per subject exists: limits retention, file
    /// storage, at most one message per subject and discard-new per subject, so the first
    /// publish to a subject is the only one kept and nobody can replace it
    /// (docs/protocol/bodies.md §6, docs/protocol/attachment-relay.md §3). An existing stream
    /// is used as it is (another device, or its operator, made it).
    ///
    /// ```swift
    /// try ensureKeptOnceStream(named: BodyStream.streamName, subjects: BodyStream.allSubjects,
    ///                          maxMessageBytes: BodyStream.maxMessageBytes, replicas: 1, maxAgeMs: age, what: "body")
    /// ```
    func ensureKeptOnceStream(named name: String, subjects: String, maxMessageBytes: Int32, replicas: Int,
                              maxAgeMs: Int64, what: String) throws(RelayError) {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let found = js_GetStreamInfo(&info, jetStream, name, nil, &jsError)
        if found == NATS_OK { jsStreamInfo_Destroy(info); return }
        guard found == NATS_NOT_FOUND else { throw NatsCall.error(found, "look up the \(what) stream", jsError: jsError) }

        jsError = jsErrCode(0)
        let status = addStream(named: name, subjects: subjects, jsError: &jsError) { config in
            config.Retention = js_LimitsPolicy
            config.Storage = js_FileStorage
            config.Replicas = Int64(replicas)
            config.MaxAge = maxAgeMs * 1_000_000
            config.Duplicates = min(MailboxStream.duplicateWindowMs, maxAgeMs) * 1_000_000
            config.MaxMsgSize = maxMessageBytes
            config.MaxMsgsPerSubject = 1
            config.Discard = js_DiscardNew
            config.DiscardNewPerSubject = true
        }
        if status == NATS_OK { return }
        // Another device created it in between: fine.
        if js_GetStreamInfo(&info, jetStream, name, nil, nil) == NATS_OK { jsStreamInfo_Destroy(info); return }
        throw NatsCall.error(status, "create the \(what) stream", jsError: jsError)
    }

    /// The data of the message kept under `subject`, or nil when there is none (expired,
    /// deleted, never published, or no such stream). Throws when the relay could not be asked.
    func keptMessage(stream: String, subject: String, operation: String) throws(RelayError) -> [UInt8]? {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var message: OpaquePointer?
        var jsError = jsErrCode(0)
        let status = js_GetLastMsg(&message, jetStream, stream, subject, &options, &jsError)
        if status == NATS_NOT_FOUND || jsError == JSNoMessageFoundErr || jsError == JSStreamNotFoundErr { return nil }
        try NatsCall.check(status, operation, jsError: jsError)
        guard let message else { return nil }
        defer { natsMsg_Destroy(message) }
        let count = Int(natsMsg_GetDataLength(message))
        guard count > 0, let data = natsMsg_GetData(message) else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: count))
    }

    /// The subjects matching `filter` that hold messages, with their counts (none when the
    /// stream does not exist).
    func keptSubjects(stream: String, filter: String, operation: String) throws(RelayError) -> [(subject: String, messages: UInt64)] {
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var jsError = jsErrCode(0)
        let status = filter.withCString { filter in
            options.Stream.Info.SubjectsFilter = filter
            return js_GetStreamInfo(&info, jetStream, stream, &options, &jsError)
        }
        if status == NATS_NOT_FOUND || jsError == JSStreamNotFoundErr { return [] }
        try NatsCall.check(status, operation, jsError: jsError)
        guard let info else { return [] }
        defer { jsStreamInfo_Destroy(info) }
        guard let subjects = info.pointee.State.Subjects else { return [] }
        var kept: [(subject: String, messages: UInt64)] = []
        for index in 0..<Int(subjects.pointee.Count) {
            let entry = subjects.pointee.List[index]
            guard entry.Msgs > 0, let name = entry.Subject else { continue }
            kept.append((String(cString: name), entry.Msgs))
        }
        return kept
    }
}
