import SottoWire

/// The content of a `sotto/receipt:1.0` message (docs/protocol/receipts.md): which of the
/// receipt's recipient's messages the signer's device stored (`delivered`) and which it
/// refused for good after verifying who sent them (`failed`, with the ack code).
///
/// ```swift
/// let receipt = Receipt(delivered: ["6808def4bd91c908e46f977561042b0e"],
///                       failed: [.init(messageId: "0f1e…", error: "body_missing")])
/// let bytes = receipt.encode()          // {"delivered":["6808…"],"failed":[{"id":"0f1e…","error":"body_missing"}]}
/// let back = try Receipt.decode(bytes)  // the same receipt
/// ```
public struct Receipt: Sendable, Equatable {
    public struct Failure: Sendable, Equatable {
        public let messageId: String
        /// An ack error code (PROTOCOL §2, bodies.md §7): 1 to 32 bytes of `a-z`, `0-9`, `_`.
        public let error: String

        public init(messageId: String, error: String) {
            self.messageId = messageId
            self.error = error
        }
    }

    /// Entries (delivered plus failed) in one receipt: the largest receipt, sealed, fits one
    /// 4096-byte push (receipts.md §2).
    public static let maxEntries = 20
    public static let maxErrorBytes = 32

    public let delivered: [String]
    public let failed: [Failure]

    public init(delivered: [String], failed: [Failure] = []) {
        self.delivered = delivered
        self.failed = failed
    }

    public var messageIds: [String] { delivered + failed.map(\.messageId) }

    /// Compact JSON, `delivered` then `failed`, each key only when its list is not empty.
    public func encode() -> [UInt8] {
        var object = JSONObject()
        if !delivered.isEmpty { object.set("delivered", .array(delivered.map(JSONValue.string))) }
        if !failed.isEmpty {
            object.set("failed", .array(failed.map { .object(["id": .string($0.messageId), "error": .string($0.error)]) }))
        }
        return JSONWriter.bytes(.object(object))
    }

    /// `malformed_message` for anything but receipts.md §3's shape: a JSON object whose
    /// `delivered` (list of message ids) and `failed` (list of `{id, error}`) hold 1 to
    /// `maxEntries` entries together, no id twice. Unknown keys are ignored.
    public static func decode(_ content: [UInt8]) throws(PushError) -> Receipt {
        guard let value = try? JSONParser.parse(content, limits: MessageContent.contentJSONLimits),
              value.object != nil else { throw malformed("content is not a JSON object") }
        var delivered: [String] = []
        var failed: [Failure] = []
        if let list = value["delivered"] {
            guard let items = list.array, items.count <= maxEntries else { throw malformed("delivered is not a list of at most \(maxEntries)") }
            for item in items {
                guard let id = item.string, ProtocolIds.isId16(id) else { throw malformed("delivered holds something other than a message id") }
                delivered.append(id)
            }
        }
        if let list = value["failed"] {
            guard let items = list.array, items.count <= maxEntries else { throw malformed("failed is not a list of at most \(maxEntries)") }
            for item in items {
                guard item.object != nil, let id = item["id"]?.string, ProtocolIds.isId16(id) else {
                    throw malformed("a failed entry has no message id")
                }
                guard let error = item["error"]?.string, isErrorCode(error) else { throw malformed("a failed entry's error is not an ack code") }
                failed.append(Failure(messageId: id, error: error))
            }
        }
        let ids = delivered + failed.map(\.messageId)
        guard !ids.isEmpty else { throw malformed("names no message") }
        guard ids.count <= maxEntries else { throw malformed("names more than \(maxEntries) messages") }
        guard Set(ids).count == ids.count else { throw malformed("names a message twice") }
        return Receipt(delivered: delivered, failed: failed)
    }

    /// 1 to 32 bytes of `a-z`, `0-9`, `_`: an ack error code, safe to show and to store.
    public static func isErrorCode(_ text: String) -> Bool {
        let utf8 = text.utf8
        return (1...maxErrorBytes).contains(utf8.count)
            && utf8.allSatisfy { (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") }
    }

    private static func malformed(_ why: String) -> PushError {
        PushError(.malformedMessage, "\(ContentType.receipt) \(why)")
    }
}
