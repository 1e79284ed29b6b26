import ControlProtocol
import SottoWire

// MARK: - A call answered after a stream of notifications

extension ControlClient {
    /// Calls `params`' method and hands each `notification` that arrives before its answer to
    /// `each`, in order, then returns the typed result. When `each` throws, the connection is
    /// shut down (the daemon sees its client go and stops) and the error is thrown as it came.
    /// `raw` sees each line first and returns true when it took it (a fast
    /// reader of one exact spelling, as `saveAttachment` has).
    ///
    /// ```swift
    /// let result = try client.callStreaming(params, notification: .attachmentData) { params in … }
    /// ```
    public func callStreaming<P: ControlRequest>(_ params: P, notification: ControlNotificationName,
                                                 raw: ([UInt8]) throws -> Bool = { _ in false },
                                                 each: (JSONValue) throws -> Void) throws -> P.Result {
        let id = nextRequestID()
        try sendRaw(Array(JSONRPC.requestLine(id: id, method: P.method.rawValue, params: params.json).utf8))
        while true {
            let read: Result<[UInt8], Failure> = Result { () throws(Failure) in try readLine() }
            guard case .success(let line) = read else {
                if case .failure(.protocolError(let detail)) = read, detail == Self.closedDetail {
                    throw Failure.protocolError("the daemon closed the connection before it answered \(P.method.rawValue)")
                }
                _ = try read.get()
                continue
            }
            do {
                if try raw(line) { continue }
            } catch {
                shutdown()
                throw error
            }
            let message: JSONRPC.ServerMessage
            do {
                message = try JSONRPC.ServerMessage(line: line)
            } catch {
                throw Failure.protocolError(error.detail)
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

    /// `saveAttachment`: each piece of the file, in order, to `each` (its offset, the file's
    /// size, its bytes), then the result. Lines spelled as `AttachmentDataLine` writes them
    /// are read without a JSON tree; any other spelling of `attachmentData` as JSON.
    ///
    /// ```swift
    /// let saved = try client.saveAttachment(SaveAttachmentParams(message: "3fa2")) { offset, size, bytes in
    ///     try sink.write(bytes)
    /// }
    /// ```
    public func saveAttachment(_ params: SaveAttachmentParams,
                               each: (_ offset: Int64, _ size: Int64, _ bytes: [UInt8]) throws -> Void) throws -> SavedAttachment {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(65_536)
        return try callStreaming(params, notification: .attachmentData, raw: { line in
            bytes.removeAll(keepingCapacity: true)
            guard let (offset, size) = line.withUnsafeBytes({ AttachmentDataLine.decode($0, appendingTo: &bytes) }) else { return false }
            try each(offset, size, bytes)
            return true
        }, each: { json in
            let piece = try AttachmentData(json: json)
            guard let decoded = piece.bytes else { throw Failure.protocolError("attachmentData: data is not base64url") }
            try each(piece.offset, piece.size, decoded)
        })
    }
}
