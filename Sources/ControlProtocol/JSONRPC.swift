import Foundation

/// JSON-RPC 2.0 over the control socket: one JSON object per line in each direction.
///
/// ```swift
/// switch JSONRPC.parse(line) {
/// case .request(let request): … request.method, request.params["conversation"] …
/// case .invalid(let errorResponse): connection.send(errorResponse)
/// }
/// ```
public enum JSONRPC {
    /// The largest request line accepted; longer lines get `invalidRequest` and are discarded.
    public static let maxLineBytes = 256 * 1024

    public struct Request: @unchecked Sendable {
        /// `nil` for a notification (no reply expected).
        public let id: Any?
        public let hasID: Bool
        public let method: String
        public let params: [String: Any]
    }

    public struct ErrorObject: Error, Equatable {
        public let code: Int
        public let message: String

        public static let parseError = ErrorObject(code: -32700, message: "parse error: not a JSON object")
        public static let invalidRequest = ErrorObject(code: -32600, message: "invalid request")
        public static let lineTooLong = ErrorObject(code: -32600, message: "invalid request: line longer than \(JSONRPC.maxLineBytes) bytes")
        public static func methodNotFound(_ method: String) -> ErrorObject {
            ErrorObject(code: -32601, message: "method not found: \(method)")
        }
        public static func invalidParams(_ detail: String) -> ErrorObject {
            ErrorObject(code: -32602, message: "invalid params: \(detail)")
        }
        public static func internalError(_ detail: String) -> ErrorObject {
            ErrorObject(code: -32603, message: "internal error: \(detail)")
        }
        // Application errors (-32000 … -32099).
        public static func notFound(_ detail: String) -> ErrorObject { ErrorObject(code: -32001, message: detail) }
        public static func refused(_ detail: String) -> ErrorObject { ErrorObject(code: -32002, message: detail) }
        public static func unavailable(_ detail: String) -> ErrorObject { ErrorObject(code: -32003, message: detail) }
    }

    public enum Parsed {
        case request(Request)
        case invalid(String)  // an error response line to send back
    }

    public static func parse(_ line: Data) -> Parsed {
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

    public static func resultLine(id: Any?, _ result: Any) -> String {
        line(["jsonrpc": "2.0", "id": id ?? NSNull(), "result": result])
    }

    public static func errorLine(id: Any?, _ error: ErrorObject) -> String {
        line(["jsonrpc": "2.0", "id": id ?? NSNull(), "error": ["code": error.code, "message": error.message]])
    }

    public static func notificationLine(method: String, params: [String: Any]) -> String {
        line(["jsonrpc": "2.0", "method": method, "params": params])
    }

    public static func requestLine(id: Int, method: String, params: [String: Any]) -> String {
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
    public func string(_ key: String) throws(JSONRPC.ErrorObject) -> String {
        guard let value = params[key] as? String, !value.isEmpty else {
            throw .invalidParams("'\(key)' must be a non-empty string")
        }
        return value
    }

    public func optionalString(_ key: String) throws(JSONRPC.ErrorObject) -> String? {
        guard let value = params[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw .invalidParams("'\(key)' must be a string") }
        return text
    }

    public func optionalInt(_ key: String) throws(JSONRPC.ErrorObject) -> Int64? {
        guard let value = params[key], !(value is NSNull) else { return nil }
        guard !Self.isJSONBoolean(value), let number = value as? NSNumber,
              number.doubleValue == number.doubleValue.rounded(), abs(number.doubleValue) < 9.0e15 else {
            throw .invalidParams("'\(key)' must be an integer")
        }
        return number.int64Value
    }

    public func optionalBool(_ key: String) throws(JSONRPC.ErrorObject) -> Bool? {
        guard let value = params[key], !(value is NSNull) else { return nil }
        guard Self.isJSONBoolean(value), let flag = value as? Bool else { throw .invalidParams("'\(key)' must be a boolean") }
        return flag
    }

    /// Whether a JSONSerialization value was a JSON `true`/`false`. On Linux it arrives as an
    /// `NSNumber` (`__NSCFBoolean`, objCType "c") for which `is Bool` and `as? NSNumber` both
    /// succeed, exactly as for the numbers 0 and 1; only the objCType tells them apart.
    public static func isJSONBoolean(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }
}
