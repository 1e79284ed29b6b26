import SottoWire

extension JSONRPC {
    /// A JSON-RPC error object (`{"code":…,"message":…}`): what the daemon answers instead of
    /// a result, and what a client gets back as an error.
    ///
    /// ```swift
    /// throw JSONRPC.ErrorObject.invalidParams("'limit' must be 1…10000")
    /// JSONRPC.ErrorObject.notFound("no conversation matches 'ab'").code == .notFound   // true
    /// ```
    public struct ErrorObject: Error, Equatable, Sendable, CustomStringConvertible {
        public let code: RPCErrorCode
        public let message: String

        public init(code: RPCErrorCode, message: String) {
            self.code = code
            self.message = message
        }

        public var description: String { message }

        // MARK: The daemon's errors, with their messages

        public static let parseError = ErrorObject(code: .parseError, message: "parse error: not a JSON object")
        public static let invalidRequest = ErrorObject(code: .invalidRequest, message: "invalid request")
        public static let lineTooLong = ErrorObject(
            code: .invalidRequest, message: "invalid request: line longer than \(JSONRPC.maxLineBytes) bytes")
        public static func methodNotFound(_ method: String) -> ErrorObject {
            ErrorObject(code: .methodNotFound, message: "method not found: \(method)")
        }
        public static func invalidParams(_ detail: String) -> ErrorObject {
            ErrorObject(code: .invalidParams, message: "invalid params: \(detail)")
        }
        public static func internalError(_ detail: String) -> ErrorObject {
            ErrorObject(code: .internalError, message: "internal error: \(detail)")
        }
        public static func notFound(_ detail: String) -> ErrorObject { ErrorObject(code: .notFound, message: detail) }
        public static func refused(_ detail: String) -> ErrorObject { ErrorObject(code: .refused, message: detail) }
        public static func unavailable(_ detail: String) -> ErrorObject { ErrorObject(code: .unavailable, message: detail) }

        // MARK: Wire form

        public var json: JSONValue { ["code": .int(Int64(code.rawValue)), "message": .string(message)] }

        /// Reads `{"code":…,"message":…}`; nil when either is missing or mistyped.
        public init?(json: JSONValue) {
            guard let code = json["code"]?.int64, let small = Int(exactly: code),
                  let message = json["message"]?.string else { return nil }
            self.init(code: RPCErrorCode(rawValue: small), message: message)
        }
    }
}
