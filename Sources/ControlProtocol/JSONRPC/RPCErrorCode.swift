/// The JSON-RPC error codes the control socket answers with: the five of JSON-RPC 2.0 and
/// three of the application range (-32000 … -32099). Clients branch on these (the CLI maps
/// them to exit codes), so the numbers never change.
///
/// ```swift
/// RPCErrorCode.notFound.rawValue         // -32001
/// RPCErrorCode(rawValue: -32602) == .invalidParams   // true
/// ```
public struct RPCErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    // MARK: JSON-RPC 2.0

    /// The line is not a JSON object.
    public static let parseError = RPCErrorCode(rawValue: -32700)
    /// A JSON object that is not a request (no `jsonrpc: "2.0"`, no method, a bad id, a line too long).
    public static let invalidRequest = RPCErrorCode(rawValue: -32600)
    public static let methodNotFound = RPCErrorCode(rawValue: -32601)
    /// A parameter is missing, of the wrong type or out of range; or the request is invalid for the data.
    public static let invalidParams = RPCErrorCode(rawValue: -32602)
    public static let internalError = RPCErrorCode(rawValue: -32603)

    // MARK: Application

    /// No conversation or message matches (or a prefix matches several).
    public static let notFound = RPCErrorCode(rawValue: -32001)
    /// Not allowed: e.g. exploding a conversation this device did not create.
    public static let refused = RPCErrorCode(rawValue: -32002)
    /// The daemon cannot do it now: busy, keystore or database trouble, an identity that cannot be opened.
    public static let unavailable = RPCErrorCode(rawValue: -32003)

    /// Every code above, with the name the OpenRPC document gives it.
    public static let all: [(name: String, code: RPCErrorCode)] = [
        ("parseError", .parseError), ("invalidRequest", .invalidRequest), ("methodNotFound", .methodNotFound),
        ("invalidParams", .invalidParams), ("internalError", .internalError), ("notFound", .notFound),
        ("refused", .refused), ("unavailable", .unavailable),
    ]

    public var description: String { String(rawValue) }
}
