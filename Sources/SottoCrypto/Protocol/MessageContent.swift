import SottoWire

/// A request to join, sent by a non-member who holds an invite code (validated by the creator).
public struct JoinRequest: Sendable, Equatable {
    public let inviteId: String
    public let secret: String
    public let profileName: String
    public let endpoint: String
    public let clientId: String

    public init(inviteId: String, secret: String, profileName: String, endpoint: String, clientId: String) {
        self.inviteId = inviteId
        self.secret = secret
        self.profileName = profileName
        self.endpoint = endpoint
        self.clientId = clientId
    }
}

/// One member in a `sotto/membership:1.0` list.
public struct Member: Sendable, Equatable {
    public let inboxId: String
    public let publicKey: String
    public let endpoint: String
    public let clientId: String
    public let profileName: String

    public init(inboxId: String, publicKey: String, endpoint: String, clientId: String, profileName: String) {
        self.inboxId = inboxId
        self.publicKey = publicKey
        self.endpoint = endpoint
        self.clientId = clientId
        self.profileName = profileName
    }
}

public enum ReactionAction: String, Sendable, Equatable {
    case added
    case removed
}

/// Decoded message content (PROTOCOL §5).
///
/// ```swift
/// let content = try MessageContent.decode(contentType: m.contentType, content: m.contentBytes, fallback: m.fallback)
/// content.displayText   // "hello", "reacted 👍", "A poll", …
/// ```
public enum MessageContent: Sendable, Equatable {
    case text(String)
    case reply(reference: String, text: String)
    case reaction(reference: String, action: ReactionAction, emoji: String)
    /// The creator's decision on when the conversation explodes, or a cancel
    /// (docs/protocol/explode-schedule.md).
    case explodeSettings(ExplodeSchedule)
    case joinRequest(JoinRequest)
    /// The full roster. `version` is the roster version it sets (docs/protocol/roster.md); nil
    /// from a version-1 creator, whose list simply replaces the roster (PROTOCOL §5).
    case membership(name: String, members: [Member], version: Int64?)
    /// One versioned change of the roster (docs/protocol/roster.md).
    case rosterDelta(RosterDelta)
    /// The signer, a member, asks the creator for the full roster; `version` is the roster
    /// version its device is at (docs/protocol/roster.md §9).
    case rosterRequest(version: Int64)
    /// The signer, a member, asks the creator to change its profile name to this (1 … 100
    /// bytes, no control character; docs/protocol/roster.md §10).
    case rename(profileName: String)
    /// The signer leaves the conversation (docs/protocol/leave-remove.md). The content is a JSON
    /// object whose keys are all ignored: it names no member, the signature does.
    case leave
    /// The creator removes the member with this inbox id (docs/protocol/leave-remove.md §6).
    case remove(inboxId: String)
    /// A delivery receipt for messages the recipient sent (docs/protocol/receipts.md).
    case receipt(Receipt)
    /// The creator refuses this device's join request (docs/protocol/join-refusal.md).
    case joinRefused(JoinRefusal)
    /// A file a member sent: the reference to its stored form, decoded strictly
    /// (docs/protocol/attachments.md §3); the file travels apart from the message.
    case attachment(AttachmentReference)
    /// An unknown content type shown as its fallback text.
    case unknown(contentType: String, fallback: String)

    /// A content's JSON, as large as a body can carry.
    static let contentJSONLimits = JSONParser.Limits(maxBytes: BodySize.maxContentBytes, maxDepth: 8, beyondMaxDepth: .skip)

    /// `unsupported_content` for an unknown type without fallback text; `malformed_message`
    /// for a known type whose bytes do not match its shape.
    public static func decode(contentType: String, content: [UInt8], fallback: String?) throws(PushError) -> MessageContent {
        switch contentType {
        case ContentType.text:
            guard let text = String(validating: content, as: UTF8.self) else {
                throw PushError(.malformedMessage, "text content is not UTF-8")
            }
            guard !text.isEmpty else { throw PushError(.malformedMessage, "text content is empty") }
            guard content.count <= ContentLimits.maxTextBytes else { throw PushError(.malformedMessage, "text is over \(ContentLimits.maxTextBytes) bytes") }
            return .text(text)
        case ContentType.reply:
            let value = try object(content, contentType)
            let reference = try string(value, "reference", contentType, ProtocolIds.isId16)
            return .reply(reference: reference, text: try string(value, "text", contentType) {
                !$0.isEmpty && $0.utf8.count <= ContentLimits.maxTextBytes
            })
        case ContentType.reaction:
            let value = try object(content, contentType)
            let reference = try string(value, "reference", contentType, ProtocolIds.isId16)
            guard let action = ReactionAction(rawValue: try string(value, "action", contentType)) else {
                throw PushError(.malformedMessage, "reaction action is not added or removed")
            }
            let emoji = try string(value, "content", contentType) { !$0.isEmpty && $0.utf8.count <= 64 }
            return .reaction(reference: reference, action: action, emoji: emoji)
        case ContentType.explodeSettings:
            return .explodeSettings(try ExplodeSchedule.decode(try object(content, contentType)))
        case ContentType.joinRequest:
            let value = try object(content, contentType)
            return .joinRequest(JoinRequest(
                inviteId: try string(value, "inviteId", contentType, isSecretHex),
                secret: try string(value, "secret", contentType, isSecretHex),
                profileName: try string(value, "profileName", contentType, isProfileName),
                endpoint: try string(value, "endpoint", contentType, ProtocolIds.isEndpoint),
                clientId: try string(value, "clientId", contentType, ProtocolIds.isClientId)))
        case ContentType.membership:
            let value = try object(content, contentType)
            let name = try string(value, "name", contentType) {
                $0.utf8.count <= ContentLimits.maxConversationNameBytes && isDisplayable($0)
            }
            guard let list = value["members"]?.array, list.count <= ContentLimits.maxMembers else {
                throw PushError(.malformedMessage, "membership members is missing, not a list, or too long")
            }
            var members: [Member] = []
            var seen: Set<String> = []
            for item in list {
                let entry = try member(item, contentType)
                guard seen.insert(entry.inboxId).inserted else {
                    throw PushError(.malformedMessage, "membership lists a member twice")
                }
                members.append(entry)
            }
            var version: Int64?
            if let field = value["version"] {
                guard let number = field.int64, number >= 1, number <= RosterDelta.maxVersion else {
                    throw PushError(.malformedMessage, "membership version is not an integer from 1 to 2^53-1")
                }
                version = number
            }
            return .membership(name: name, members: members, version: version)
        case ContentType.rosterDelta:
            let value = try object(content, contentType)
            return .rosterDelta(try RosterDelta.decode(value) { item throws(PushError) in try member(item, contentType) })
        case ContentType.rosterRequest:
            return .rosterRequest(version: try RosterRequest.decode(try object(content, contentType)).version)
        case ContentType.rename:
            let value = try object(content, contentType)
            return .rename(profileName: try string(value, "profileName", contentType) { !$0.isEmpty && isProfileName($0) })
        case ContentType.leave:
            _ = try object(content, contentType)
            return .leave
        case ContentType.remove:
            let value = try object(content, contentType)
            return .remove(inboxId: try string(value, "inboxId", contentType, ProtocolIds.isInboxId))
        case ContentType.receipt:
            return .receipt(try Receipt.decode(content))
        case ContentType.joinRefused:
            return .joinRefused(try JoinRefusal.decode(content))
        case ContentType.attachment:
            return .attachment(try AttachmentReference.decode(content))
        default:
            guard let fallback, !fallback.isEmpty else {
                throw PushError(.unsupportedContent, "content type \(printable(contentType)) is unknown and has no fallback")
            }
            return .unknown(contentType: contentType, fallback: fallback)
        }
    }

    /// One line for a notification.
    public var displayText: String {
        switch self {
        case .text(let text): return text
        case .reply(_, let text): return text
        case .reaction(_, .added, let emoji): return "reacted \(emoji)"
        case .reaction(_, .removed, let emoji): return "removed \(emoji)"
        case .explodeSettings(let schedule): return schedule.fallback
        case .joinRequest(let request): return "\(request.profileName) asked to join"
        case .membership(let name, let members, _): return "\(name): \(members.count) members"
        case .rosterDelta(let delta): return delta.fallback
        case .rosterRequest: return "asked for the member list"
        case .rename(let name): return "asked to be called \(name)"
        case .leave: return "left the conversation"
        case .remove: return "removed a member"
        case .receipt: return "delivery receipt"
        case .joinRefused(let refusal): return "refused your request to join: \(refusal.reason.words)"
        case .attachment(let reference): return "📎 \(reference.name)"
        case .unknown(_, let fallback): return fallback
        }
    }

    // MARK: - Helpers

    /// A profile name: at most `ContentLimits.maxProfileNameBytes`, no control characters (it is printed on
    /// terminals and in notifications). Empty means "no name".
    public static func isProfileName(_ text: String) -> Bool {
        text.utf8.count <= ContentLimits.maxProfileNameBytes && isDisplayable(text)
    }

    /// No C0/C1 control characters and no DEL: a name cannot move a terminal's cursor.
    /// `InertText` is the one table of what a control is; what it shows of the rest
    /// (bidirectional controls) is decided where a name is shown (docs/adr/0062).
    public static func isDisplayable(_ text: String) -> Bool {
        !InertText.containsControls(text)
    }

    /// Invite ids and secrets: 1 to 64 bytes of lowercase hex.
    static func isSecretHex(_ text: String) -> Bool {
        let count = text.utf8.count
        return count >= 2 && count <= 128 && count % 2 == 0 && Hex.isCanonical(text, byteCount: count / 2)
    }

    /// One member of a full roster or a delta's `added`; its inboxId must be its key's.
    private static func member(_ item: JSONValue, _ contentType: String) throws(PushError) -> Member {
        guard item.object != nil else { throw PushError(.malformedMessage, "\(contentType) member is not an object") }
        let member = Member(
            inboxId: try string(item, "inboxId", contentType, ProtocolIds.isInboxId),
            publicKey: try string(item, "publicKey", contentType) { Hex.isCanonical($0, byteCount: 33) },
            endpoint: try string(item, "endpoint", contentType, ProtocolIds.isEndpoint),
            clientId: try string(item, "clientId", contentType, ProtocolIds.isClientId),
            profileName: try string(item, "profileName", contentType, isProfileName))
        // A member is its key: an inboxId another key claims would be a member nobody can be.
        guard (try? PublicKey(hex: member.publicKey))?.inboxId == member.inboxId else {
            throw PushError(.malformedMessage, "\(contentType) lists an inboxId that is not hex(SHA-256(publicKey))")
        }
        return member
    }

    private static func object(_ content: [UInt8], _ contentType: String) throws(PushError) -> JSONValue {
        guard let value = try? JSONParser.parse(content, limits: contentJSONLimits),
              value.object != nil
        else { throw PushError(.malformedMessage, "\(contentType) content is not a JSON object") }
        return value
    }

    private static func string(_ value: JSONValue, _ key: String, _ contentType: String,
                               _ isValid: (String) -> Bool = { _ in true }) throws(PushError) -> String {
        guard let text = value[key]?.string, isValid(text) else {
            throw PushError(.malformedMessage, "\(contentType) \(key) is missing or malformed")
        }
        return text
    }

    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" })
    }
}
