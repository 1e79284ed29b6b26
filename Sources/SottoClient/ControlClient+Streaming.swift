import ControlProtocol
import SottoWire

// MARK: - A call answered after a stream of notifications

extension ControlClient {
    /// Calls `params`' method and hands each `notification` that arrives before its answer to
    /// `each`, in order, then returns the typed result (`saveAttachment` streams the file as
    /// `attachmentData` before it answers). When `each` throws, the connection is shut down
    /// (the daemon sees its client go and stops) and the error is thrown as it came.
    ///
    /// ```swift
    /// let saved = try client.callStreaming(SaveAttachmentParams(message: "3fa2"), notification: .attachmentData) { params in
    ///     let piece = try AttachmentData(json: params); try sink.write(piece.bytes ?? [])
    /// }
    /// ```
    public func callStreaming<P: ControlRequest>(_ params: P, notification: ControlNotificationName,
                                                 each: (JSONValue) throws -> Void) throws -> P.Result {
        let id = nextRequestID()
        try sendRaw(Array(JSONRPC.requestLine(id: id, method: P.method.rawValue, params: params.json).utf8))
        while true {
            let read: Result<JSONRPC.ServerMessage, Failure> = Result { () throws(Failure) in try readMessage() }
            guard case .success(let message) = read else {
                if case .failure(.protocolError(let detail)) = read, detail == Self.closedDetail {
                    throw Failure.protocolError("the daemon closed the connection before it answered \(P.method.rawValue)")
                }
                try read.get()
                continue
            }
            switch message {
            case .notification(let method, let value) where method == notification.rawValue:
                do {
                    try each(value)
                } catch {
                    shutdown()
                    throw error
                }
            case .notification:
                continue
            case .response(let answered, let outcome):
                guard answered == .number(id) || answered == .null else {
                    throw Failure.protocolError("a response to another request (\(answered))")
                }
                switch outcome {
                case .failure(let error): throw Failure.rpc(error)
                case .success(let json):
                    do {
                        return try P.Result(json: json)
                    } catch {
                        throw Failure.protocolError("\(P.method.rawValue) result: \(error.detail)")
                    }
                }
            }
        }
    }
}
