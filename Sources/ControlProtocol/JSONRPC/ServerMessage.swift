import SottoWire

extension JSONRPC {
    /// A line from the daemon, as a client reads it: the response to one of its requests,
    /// or a notification (a `subscribe`'s `change`).
    ///
    /// ```swift
    /// switch try JSONRPC.ServerMessage(line: bytes) {
    /// case .response(let id, .success(let result)): …
    /// case .response(_, .failure(let error)): print(error.code, error.message)
    /// case .notification(let method, let params): …
    /// }
    /// ```
    public enum ServerMessage: Sendable, Equatable {
        case response(id: RequestID, outcome: Result<JSONValue, ErrorObject>)
        case notification(method: String, params: JSONValue)

        /// Parses one line (without its LF); a line that is neither a response nor a
        /// notification is a `WireError` saying what is wrong with it.
        public init<Bytes: Collection>(line: Bytes) throws(WireError) where Bytes.Element == UInt8 {
            let value: JSONValue
            do {
                value = try JSONParser.parse(line, limits: .init(maxBytes: JSONRPC.maxReplyBytes, maxDepth: JSONRPC.maxReplyDepth))
            } catch {
                throw WireError("not JSON (\(error))")
            }
            guard case .object(let object) = value else { throw WireError("not a JSON object") }
            guard object["jsonrpc"] == "2.0" else { throw WireError("no \"jsonrpc\":\"2.0\"") }
            if let method = object["method"]?.string, object["id"] == nil {
                self = .notification(method: method, params: object["params"] ?? .object(JSONObject()))
                return
            }
            guard let idValue = object["id"], let id = RequestID(json: idValue) else {
                throw WireError("neither a response (id) nor a notification (method)")
            }
            if let errorValue = object["error"] {
                guard let error = ErrorObject(json: errorValue) else { throw WireError("malformed error object") }
                self = .response(id: id, outcome: .failure(error))
            } else if let result = object["result"] {
                self = .response(id: id, outcome: .success(result))
            } else {
                throw WireError("a response with neither result nor error")
            }
        }

        /// The line's JSON object, as the daemon writes it.
        public var json: JSONValue {
            switch self {
            case .response(let id, .success(let result)): return ["jsonrpc": "2.0", "id": id.json, "result": result]
            case .response(let id, .failure(let error)): return ["jsonrpc": "2.0", "id": id.json, "error": error.json]
            case .notification(let method, let params): return ["jsonrpc": "2.0", "method": .string(method), "params": params]
            }
        }
    }
}
