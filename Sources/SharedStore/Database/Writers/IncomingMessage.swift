import SottoCrypto
import SottoWire

/// A member as a membership message (or a new conversation) lists it.
///
/// ```swift
/// MemberEntry(inboxId: id, publicKey: pkHex, endpoint: "unix:/run/x.sock",
///             clientId: client, profileName: "Ann")
/// ```
public struct MemberEntry: Sendable, Equatable {
    public var inboxId: String
    public var publicKey: String
    public var endpoint: String
    public var clientId: String
    public var profileName: String?

    public init(inboxId: String, publicKey: String, endpoint: String, clientId: String,
                profileName: String? = nil) {
        self.inboxId = inboxId
        self.publicKey = publicKey
        self.endpoint = endpoint
        self.clientId = clientId
        self.profileName = profileName
    }
}

/// A verified, decrypted message ready to store (PROTOCOL §4), with its content already
/// parsed into what the store needs.
///
/// ```swift
/// let m = IncomingMessage(id: mid, conversationId: cid, senderInboxId: sender,
///                         senderPublicKey: pk, sentAtMs: t, contentType: "xmtp.org/text:1.0",
///                         content: Array("hi".utf8), fallback: nil, kind: .stored(referenceId: nil))
/// ```
public struct IncomingMessage: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Text, reply, reaction, or an unknown type shown by its fallback.
        case stored(referenceId: String?)
        /// The creator's decision on when it explodes (docs/protocol/explode-schedule.md).
        case explodeSettings(ExplodeSchedule)
        case joinRequest(inviteId: String, secret: String, profileName: String?, endpoint: String, clientId: String)
        /// The full roster; `version` nil from a version-1 creator (docs/protocol/roster.md §4).
        case membership(name: String?, members: [MemberEntry], version: Int64? = nil)
        /// One change of the roster from version `base` to `base + 1` (docs/protocol/roster.md §3).
        case rosterDelta(base: Int64, added: [MemberEntry], removed: [String], renamed: [RosterDelta.Rename])
        /// The sender leaves: its member row goes (docs/protocol/leave-remove.md).
        case leave
        /// The creator removes this member: its row goes, or, on its own device, the
        /// conversation is deleted (docs/protocol/leave-remove.md §6).
        case remove(inboxId: String)
        /// A delivery receipt for messages this device sent (docs/protocol/receipts.md):
        /// applied to the outbox, never stored as a message.
        case receipt(Receipt)
        /// A member asks this device, the creator's, for the full roster (docs/protocol/roster.md
        /// §9): recorded for the daemon to answer, never stored as a message.
        case rosterRequest(version: Int64)
        /// A member asks this device, the creator's, to rename it (docs/protocol/roster.md §10):
        /// recorded for the daemon to re-issue as a roster delta, never stored as a message.
        case rename(profileName: String)
        /// The creator refuses this device's join request `joinRequestId`; `reason` is a raw
        /// value of `JoinRefusal.Reason` (docs/protocol/join-refusal.md): recorded in
        /// `join_refusal`, never stored as a message.
        case joinRefused(joinRequestId: String, reason: String)
    }

    public var id: String
    public var conversationId: String
    public var senderInboxId: String
    public var senderPublicKey: String
    public var sentAtMs: Int64
    public var contentType: String
    public var content: [UInt8]
    public var fallback: String?
    public var kind: Kind

    public init(id: String, conversationId: String, senderInboxId: String, senderPublicKey: String,
                sentAtMs: Int64, contentType: String, content: [UInt8], fallback: String?, kind: Kind) {
        self.id = id
        self.conversationId = conversationId
        self.senderInboxId = senderInboxId
        self.senderPublicKey = senderPublicKey
        self.sentAtMs = sentAtMs
        self.contentType = contentType
        self.content = content
        self.fallback = fallback
        self.kind = kind
    }
}

/// Why an incoming message was refused; nothing was written. Maps 1:1 to PROTOCOL §2 codes.
///
/// ```swift
/// error.protocolCode   // "unknown_sender"
/// error.isRetryable    // false
/// ```
public enum IncomingWriteError: StoreErrorConvertible, Equatable {
    case unknownConversation
    case conversationExpired
    /// Not a member of the conversation with that key.
    case unknownSender
    /// A member (or, for a join request, anyone) who may not send this content here; the
    /// reason names the rule (`SenderRules`). Acked as `unknown_sender`.
    case notPermitted(String)
    /// Well-formed content that breaks a rule of the conversation (e.g. a membership that
    /// drops the creator). Acked as `malformed_message`.
    case invalidContent(String)
    /// A receipt naming a message this device did not send to the receipt's signer.
    /// Acked as `unknown_message`.
    case unknownMessage(String)
    case store(StoreError)

    public init(storeError: StoreError) { self = .store(storeError) }
    public var underlyingStoreError: StoreError? { if case .store(let error) = self { error } else { nil } }

    /// The ack's `error` value.
    public var protocolCode: String {
        switch self {
        case .unknownConversation: return "unknown_conversation"
        case .conversationExpired: return "conversation_expired"
        case .unknownSender, .notPermitted: return "unknown_sender"
        case .invalidContent: return "malformed_message"
        case .unknownMessage: return "unknown_message"
        case .store(.busy): return "busy"
        case .store: return "internal"
        }
    }

    /// The ack's `retry` value: only `busy` and `internal` are retryable.
    public var isRetryable: Bool {
        if case .store = self { return true }
        return false
    }
}

/// What writing an incoming message did.
///
/// ```swift
/// switch outcome {
/// case .duplicate: ack(duplicate: true)
/// case .written(let w): if !w.muted && !w.isOpen { notify(w.conversationName) }
/// }
/// ```
public enum IncomingWriteOutcome: Sendable, Equatable {
    /// The message id was already stored; nothing was written.
    case duplicate
    case written(IncomingWriteReceipt)
}

/// Enough about a written message to show a notification.
public struct IncomingWriteReceipt: Sendable, Equatable {
    public var seq: Int64
    public var conversationId: String
    public var conversationName: String?
    public var senderInboxId: String
    public var senderProfileName: String?
    public var muted: Bool
    public var isOpen: Bool
    public var unreadCount: Int64
    /// True for a message a user should be told about (`.stored`); false for settings,
    /// join requests and membership updates.
    public var isUserVisible: Bool
    /// What its notification may show (the conversation's setting, else the device's).
    public var preview: NotificationPreview = .deviceDefault
    /// An explode decision stored but not in force (an older one arriving late, a tie it
    /// lost): nothing changed, so nothing to tell (docs/protocol/explode-schedule.md §3).
    public var isSupersededDecision = false
}
