import SottoWire

/// The creator's answer to a join request it opened and will not accept,
/// `sotto/join_refused:1.0` (docs/protocol/join-refusal.md): which request (its message id)
/// and why, from a closed set. Signed by the creator's identity in the conversation and sealed
/// to the requester's key, clientId and endpoint from the request, like any envelope.
///
/// ```swift
/// let refusal = JoinRefusal(joinRequestId: "6808def4bd91c908e46f977561042b0e", reason: .revoked)
/// refusal.encode()                            // {"joinRequestId":"6808…","reason":"revoked"}
/// try JoinRefusal.decode(refusal.encode())    // the same refusal
/// ```
public struct JoinRefusal: Sendable, Equatable {
    /// Why the creator refused (join-refusal.md §3). A reason this build does not know, but
    /// well formed, is `.other`: what a device shows is always one of these, never a peer's bytes.
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// The conversation already has `ContentLimits.maxMembers` members.
        case full
        /// The creator revoked the invite.
        case revoked
        /// A single-use invite that already let a device in.
        case usedUp = "used_up"
        /// The invite had expired when the request arrived.
        case expired
        /// The request's secret is not the invite's.
        case badSecret = "bad_secret"
        /// The request names no invite of this conversation.
        case unknownInvite = "unknown_invite"
        /// A well-formed reason this device does not know (a newer creator's).
        case other

        /// Words for `sotto ls` and a notification.
        public var words: String {
            switch self {
            case .full: "the conversation is full"
            case .revoked: "the invite was revoked"
            case .usedUp: "the invite was already used"
            case .expired: "the invite had expired"
            case .badSecret: "the invite's secret did not match"
            case .unknownInvite: "the creator does not know the invite"
            case .other: "the creator refused it"
            }
        }
    }

    /// A reason on the wire: 1 to 32 bytes of `a-z` and `_`.
    public static let maxReasonBytes = 32

    public let joinRequestId: String
    public let reason: Reason

    public init(joinRequestId: String, reason: Reason) {
        self.joinRequestId = joinRequestId
        self.reason = reason
    }

    /// Compact JSON, keys in this order (JSONWriter).
    public func encode() -> [UInt8] {
        var object = JSONObject()
        object.set("joinRequestId", .string(joinRequestId))
        object.set("reason", .string(reason.rawValue))
        return JSONWriter.bytes(.object(object))
    }

    /// `malformed_message` for anything but §2's shape: a JSON object whose `joinRequestId` is a
    /// message id (32 lowercase hex) and whose `reason` is 1 to 32 bytes of `a-z` and `_`.
    /// Unknown keys are ignored; an unknown reason of that form is `.other`.
    public static func decode(_ content: [UInt8]) throws(PushError) -> JoinRefusal {
        guard let value = try? JSONParser.parse(content, limits: MessageContent.contentJSONLimits),
              value.object != nil else { throw malformed("content is not a JSON object") }
        guard let id = value["joinRequestId"]?.string, ProtocolIds.isId16(id) else {
            throw malformed("joinRequestId is missing or not a message id")
        }
        guard let reason = value["reason"]?.string, isReasonToken(reason) else {
            throw malformed("reason is missing or not 1 to \(maxReasonBytes) bytes of a-z and _")
        }
        return JoinRefusal(joinRequestId: id, reason: Reason(rawValue: reason) ?? .other)
    }

    static func isReasonToken(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return !bytes.isEmpty && bytes.count <= maxReasonBytes
            && bytes.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "_") }
    }

    private static func malformed(_ detail: String) -> PushError {
        PushError(.malformedMessage, "\(ContentType.joinRefused) \(detail)")
    }
}
