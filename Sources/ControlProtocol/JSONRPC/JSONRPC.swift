import SottoWire

/// JSON-RPC 2.0 over the control socket: one JSON object per line in each direction, read
/// and written with SharedStore's bounded parser and writer (the same JSON code as the
/// worker; docs/adr/0021). The daemon parses requests and writes responses and
/// notifications; a client writes requests and parses what comes back.
///
/// ```swift
/// switch JSONRPC.parse(line) {
/// case .request(let request): let params = try request.decodeParams(SendMessageParams.self)
/// case .invalid(let errorLine): connection.send(errorLine)
/// }
/// ```
public enum JSONRPC {
    // MARK: Bounds

    /// The largest request line accepted; longer lines get `invalidRequest` and are discarded.
    /// A `sendMessage` of the longest text (`ContentLimits.maxTextBytes`, 65,536 bytes) must
    /// fit whatever its characters: JSON writes a control character as `\u00XX`, six bytes
    /// for one, so the text alone can take 393,216 bytes (docs/adr/0032).
    public static let maxLineBytes = 512 * 1024
    /// The deepest nesting a request may have (every method's params are flat).
    public static let maxRequestDepth = 16
    /// The largest reply line a client reads (a `readMessages` of 10,000 long messages fits).
    public static let maxReplyBytes = 64 * 1024 * 1024
    /// The deepest nesting a reply may have (`status` has three levels).
    public static let maxReplyDepth = 16

    // MARK: Requests (the daemon's side)

    /// One request line, parsed. `params` is always an object (`{}` when absent or null).
    ///
    /// ```swift
    /// let params = try request.decodeParams(ReadMessagesParams.self)   // or .invalidParams("'limit' must be 1…10000")
    /// if request.hasID { connection.send(reply) }
    /// ```
    public struct Request: Sendable, Equatable {
        /// nil for a notification (no `id` member: no reply expected); `.null` for `"id":null`.
        public let id: RequestID?
        public let method: String
        public let params: JSONValue

        public init(id: RequestID?, method: String, params: JSONValue = .object(JSONObject())) {
            self.id = id
            self.method = method
            self.params = params
        }

        public var hasID: Bool { id != nil }

        /// The params as `P`; a missing, mistyped or out-of-range field is `invalidParams`
        /// with the field's name.
        public func decodeParams<P: WireCodable>(_: P.Type) throws(ErrorObject) -> P {
            do {
                return try P(json: params)
            } catch {
                throw .invalidParams(error.detail)
            }
        }
    }

    /// What a request line is: a request to run, or the error line to answer with.
    ///
    /// ```swift
    /// if case .invalid(let errorLine) = JSONRPC.parse(line) { connection.send(errorLine) }
    /// ```
    public enum Parsed: Sendable {
        case request(Request)
        /// An error response line to send back.
        case invalid(String)
    }

    /// Reads one request line (without its LF). Never traps: anything that is not a
    /// JSON-RPC 2.0 request object becomes the error line to answer with.
    public static func parse<Bytes: Collection>(_ line: Bytes) -> Parsed where Bytes.Element == UInt8 {
        let limits = JSONParser.Limits(maxBytes: maxLineBytes, maxDepth: maxRequestDepth)
        guard let value = try? JSONParser.parse(line, limits: limits), case .object(let object) = value else {
            return .invalid(errorLine(id: nil, .parseError))
        }
        let idMember = object["id"]
        let id = idMember.flatMap(RequestID.init(json:))
        let idIsValid = idMember == nil || id != nil
        guard idIsValid, object["jsonrpc"] == "2.0", let method = object["method"]?.string else {
            return .invalid(errorLine(id: id, .invalidRequest))
        }
        switch object["params"] {
        case nil, .null?:
            return .request(Request(id: id, method: method))
        case .object(let params)?:
            return .request(Request(id: id, method: method, params: .object(params)))
        default:
            return .invalid(errorLine(id: id, .invalidParams("params must be an object")))
        }
    }

    // MARK: Lines the daemon writes

    public static func resultLine(id: RequestID?, _ result: JSONValue) -> String {
        line(["jsonrpc": "2.0", "id": (id ?? .null).json, "result": result])
    }

    public static func errorLine(id: RequestID?, _ error: ErrorObject) -> String {
        line(["jsonrpc": "2.0", "id": (id ?? .null).json, "error": error.json])
    }

    /// A `change` notification line for a subscriber.
    public static func notificationLine(_ change: ChangeNotification) -> String {
        line(["jsonrpc": "2.0", "method": .string(ControlNotificationName.change.rawValue), "params": change.json])
    }

    /// An `attachmentData` notification line for a client saving a file.
    public static func notificationLine(_ data: AttachmentData) -> String {
        line(["jsonrpc": "2.0", "method": .string(ControlNotificationName.attachmentData.rawValue), "params": data.json])
    }

    // MARK: Lines a client writes

    public static func requestLine(id: Int64, method: String, params: JSONValue) -> String {
        line(["jsonrpc": "2.0", "id": .int(id), "method": .string(method), "params": params])
    }

    public static func requestLine<P: ControlRequest>(id: Int64, _ params: P) -> String {
        requestLine(id: id, method: P.method.rawValue, params: params.json)
    }

    private static func line(_ object: JSONValue) -> String {
        var bytes = JSONWriter.bytes(object)
        bytes.append(0x0a)
        return String(decoding: bytes, as: UTF8.self)
    }
}
