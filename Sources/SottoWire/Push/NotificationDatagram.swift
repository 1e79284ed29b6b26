/// A desktop notification a worker hands to the running daemon on `notifications.sock`:
/// `{"conversationId":"…","summary":"…","body":"…"}`. The daemon posts it with an action
/// that opens the conversation; a notification server tells the poster, not everyone, that
/// it was clicked, and the worker has exited by then (docs/adr/0046). The socket exists only
/// while the daemon is connected to the session bus, so a worker that cannot hand it over
/// posts it itself.
///
/// ```swift
/// let datagram = NotificationDatagram(conversationId: id, summary: "Book club", body: "Ann: hi")
/// UnixSocket.sendDatagram(datagram.encode(), to: runtime.notificationsSocketPath)
/// NotificationDatagram.parse(bytes)?.summary   // "Book club"; nil for anything else
/// ```
public struct NotificationDatagram: Sendable, Equatable {
    /// A summary or body longer than this is cut by the worker before it gets here (200
    /// characters of a message, a conversation name); a datagram over the limit is not one of ours.
    public static let maxBytes = 16 * 1024

    public let conversationId: String
    public let summary: String
    public let body: String

    public init(conversationId: String, summary: String, body: String) {
        self.conversationId = conversationId
        self.summary = summary
        self.body = body
    }

    public func encode() -> [UInt8] {
        JSONWriter.bytes(["conversationId": .string(conversationId), "summary": .string(summary), "body": .string(body)])
    }

    /// Reads a datagram; nil for anything that is not an object with a conversation id
    /// (16 bytes in lowercase hex) and string `summary` and `body` (other members are ignored).
    public static func parse<Bytes: Collection>(_ bytes: Bytes) -> NotificationDatagram? where Bytes.Element == UInt8 {
        guard let value = try? JSONParser.parse(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 1, beyondMaxDepth: .skip)),
              let conversationId = value["conversationId"]?.string, ProtocolIds.isId16(conversationId),
              let summary = value["summary"]?.string, let body = value["body"]?.string else { return nil }
        return NotificationDatagram(conversationId: conversationId, summary: summary, body: body)
    }
}
