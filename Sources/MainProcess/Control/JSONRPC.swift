import Foundation

/// JSON-RPC 2.0 over the control socket: one JSON object per line in each direction.
///
/// ```swift
/// switch JSONRPC.parse(line) {
/// case .request(let request): … request.method, request.params["conversation"] …
/// case .invalid(let errorResponse): connection.send(errorResponse)
/// }
/// ```
enum JSONRPC {
    /// The largest request line accepted; longer lines get `invalidRequest` and are discarded.
    static let maxLineBytes = 256 * 1024

    struct Request: @unchecked Sendable {
        /// `nil` for a notification (no reply expected).
        let id: Any?
        let hasID: Bool
        let method: String
        let params: [String: Any]
    }

    struct ErrorObject: Error, Equatable {
        let code: Int
        let message: String

        static let parseError = ErrorObject(code: -32700, message: "parse error: not a JSON object")
        static let invalidRequest = ErrorObject(code: -32600, message: "invalid request")
        static let lineTooLong = ErrorObject(code: -32600, message: "invalid request: line longer than \(JSONRPC.maxLineBytes) bytes")
        static func methodNotFound(_ method: String) -> ErrorObject {
            ErrorObject(code: -32601, message: "method not found: \(method)")
        }
        static func invalidParams(_ detail: String) -> ErrorObject {
            ErrorObject(code: -32602, message: "invalid params: \(detail)")
        }
        static func internalError(_ detail: String) -> ErrorObject {
            ErrorObject(code: -32603, message: "internal error: \(detail)")
        }
        // Application errors (-32000 … -32099).
        static func notFound(_ detail: String) -> ErrorObject { ErrorObject(code: -32001, message: detail) }
        static func refused(_ detail: String) -> ErrorObject { ErrorObject(code: -32002, message: detail) }
        static func unavailable(_ detail: String) -> ErrorObject { ErrorObject(code: -32003, message: detail) }
    }

    enum Parsed {
        case request(Request)
        case invalid(String)  // an error response line to send back
    }

    static func parse(_ line: Data) -> Parsed {
        guard let object = (try? JSONSerialization.jsonObject(with: line, options: [])) as? [String: Any] else {
            return .invalid(errorLine(id: nil, .parseError))
        }
        let id = object["id"]
        let idIsValid = id == nil || id is String || id is NSNumber || id is NSNull
        guard idIsValid, object["jsonrpc"] as? String == "2.0", let method = object["method"] as? String else {
            return .invalid(errorLine(id: idIsValid ? id : nil, .invalidRequest))
        }
        let params: [String: Any]
        switch object["params"] {
        case nil, is NSNull: params = [:]
        case let dictionary as [String: Any]: params = dictionary
        default: return .invalid(errorLine(id: id, .invalidParams("params must be an object")))
        }
        return .request(Request(id: id, hasID: object.keys.contains("id"), method: method, params: params))
    }

    static func resultLine(id: Any?, _ result: Any) -> String {
        line(["jsonrpc": "2.0", "id": id ?? NSNull(), "result": result])
    }

    static func errorLine(id: Any?, _ error: ErrorObject) -> String {
        line(["jsonrpc": "2.0", "id": id ?? NSNull(), "error": ["code": error.code, "message": error.message]])
    }

    static func notificationLine(method: String, params: [String: Any]) -> String {
        line(["jsonrpc": "2.0", "method": method, "params": params])
    }

    static func requestLine(id: Int, method: String, params: [String: Any]) -> String {
        line(["jsonrpc": "2.0", "id": id, "method": method, "params": params])
    }

    private static func line(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"internal error: unencodable result\"}}\n"
        }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

// MARK: - Typed parameter access

extension JSONRPC.Request {
    func string(_ key: String) throws(JSONRPC.ErrorObject) -> String {
        guard let value = params[key] as? String, !value.isEmpty else {
            throw .invalidParams("'\(key)' must be a non-empty string")
        }
        return value
    }

    func optionalString(_ key: String) throws(JSONRPC.ErrorObject) -> String? {
        guard let value = params[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw .invalidParams("'\(key)' must be a string") }
        return text
    }

    func optionalInt(_ key: String) throws(JSONRPC.ErrorObject) -> Int64? {
        guard let value = params[key], !(value is NSNull) else { return nil }
        // A JSON boolean arrives as Swift Bool; `is Bool` would also match NSNumber 0 and 1.
        guard type(of: value) != Bool.self, let number = value as? NSNumber,
              number.doubleValue == number.doubleValue.rounded(), abs(number.doubleValue) < 9.0e15 else {
            throw .invalidParams("'\(key)' must be an integer")
        }
        return number.int64Value
    }

    func optionalBool(_ key: String) throws(JSONRPC.ErrorObject) -> Bool? {
        guard let value = params[key], !(value is NSNull) else { return nil }
        if type(of: value) == Bool.self, let flag = value as? Bool { return flag }
        // Foundation on Linux parses a JSON boolean as an NSNumber: accept exactly 0 and 1.
        if let number = value as? NSNumber, !(value is String), number.doubleValue == 0 || number.doubleValue == 1 {
            return number.doubleValue == 1
        }
        throw .invalidParams("'\(key)' must be a boolean")
    }
}
