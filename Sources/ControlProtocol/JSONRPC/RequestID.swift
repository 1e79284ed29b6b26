import SottoWire

/// A JSON-RPC request id as the client wrote it: a string, a number or null. The daemon
/// echoes it back unchanged in the response.
///
/// ```swift
/// RequestID(json: 7)          // .number(7)
/// RequestID(json: ["a": 1])   // nil: an object is no id
/// ```
public enum RequestID: Sendable, Equatable, Hashable {
    case number(Int64)
    /// A number with a fraction or exponent: allowed by JSON-RPC, echoed as written.
    case fractional(Double)
    case string(String)
    case null

    public init?(json: JSONValue) {
        switch json {
        case .int(let value): self = .number(value)
        case .double(let value): self = .fractional(value)
        case .string(let value): self = .string(value)
        case .null: self = .null
        default: return nil
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let value): return .int(value)
        case .fractional(let value): return .double(value)
        case .string(let value): return .string(value)
        case .null: return .null
        }
    }
}
