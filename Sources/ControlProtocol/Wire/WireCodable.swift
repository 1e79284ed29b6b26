import SottoWire

/// A value of the control API with its one JSON form: the daemon and every client encode
/// and decode it with these two members, and the OpenRPC document describes it from
/// `fields` (docs/control-api.openrpc.json).
///
/// ```swift
/// struct SentMessage: WireCodable {
///     let messageId: String
///     init(json: JSONValue) throws(WireError) { messageId = try WireFields(json).string("messageId") }
///     var json: JSONValue { ["messageId": .string(messageId)] }
///     static var fields: [WireField] { [.init("messageId", .string, "the message's id")] }
/// }
/// ```
public protocol WireCodable: Sendable, Equatable {
    /// Reads the value; a missing or mistyped member throws a `WireError` naming it.
    init(json: JSONValue) throws(WireError)
    var json: JSONValue { get }
    /// The name of the type in the OpenRPC document's `components.schemas`.
    static var schemaName: String { get }
    /// Its members, for the OpenRPC document and the test that checks encodings against it.
    static var fields: [WireField] { get }
}

/// Why a JSON value is not the wire type expected: the daemon answers it as `invalidParams`,
/// a client reports it as an unexpected reply.
///
/// ```swift
/// throw WireError("'limit' must be an integer")
/// ```
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    public let detail: String

    public init(_ detail: String) { self.detail = detail }

    public var description: String { detail }
}

// MARK: - No params, no result

/// `{}`: the params of a method that takes none (`status`, `listConversations`) and the
/// result of one that returns nothing (`markRead`). Members sent anyway are ignored.
///
/// ```swift
/// try client.call(StatusParams())   // StatusParams is an EmptyObject
/// ```
public struct EmptyObject: WireCodable {
    public init() {}
    public init(json: JSONValue) throws(WireError) { _ = try WireFields(json) }
    public var json: JSONValue { .object(JSONObject()) }
    public static var schemaName: String { "Empty" }
    public static var fields: [WireField] { [] }
}
