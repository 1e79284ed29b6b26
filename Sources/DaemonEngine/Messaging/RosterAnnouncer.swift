import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire

/// How the creator tells the members about a change of the roster (docs/protocol/roster.md,
/// docs/adr/0042), inside the caller's transaction, after the change is in the member rows:
/// the conversation's `rosterVersion` goes up by one; a member who just joined gets the full
/// roster with that version (by reference when it does not fit a push); everyone else gets a
/// `sotto/roster_delta:1.0` from the previous version. Every `RosterWriter.fullRosterEvery`-th
/// version goes as the full roster to everyone instead, so a member whose gap never fills
/// catches up there.
///
/// ```swift
/// try RosterAnnouncer.queue(.joined([inboxId]), of: conversation, from: identity, on: conn)
/// try RosterAnnouncer.queue(.departed([leaver]), of: conversation, from: identity, on: conn)
/// ```
enum RosterAnnouncer {
    enum Change {
        case joined([String])
        case departed([String])
        /// Members whose profile names changed (the creator's own, or members' requests).
        case renamed([RosterDelta.Rename])
    }

    /// Returns the roster version the change produced.
    @discardableResult
    static func queue(_ change: Change, of conversation: DBConversation, from identity: Identity,
                      on conn: SQLiteConnection) throws -> Int64 {
        let now = WallClock.nowMs()
        let version = try RosterWriter.nextVersion(of: conversation.id, on: conn)
        let entries = try InvitationWriter.memberEntries(conversationId: conversation.id, on: conn)
        let members = try MemberRepository.members(of: conversation.id, on: conn)
        let name = conversation.name ?? ""

        let joined: Set<String> = if case .joined(let inboxIds) = change { Set(inboxIds) } else { [] }
        let fullToAll = version % RosterWriter.fullRosterEvery == 0
        // The delta first: the outbox sends in order, so the members who have the roster
        // learn of the change before the (larger) full rosters to the joiners go out.
        let deltaTo = fullToAll ? [] : members.filter { !joined.contains($0.inboxId) && $0.inboxId != identity.inboxId }
        if !deltaTo.isEmpty {
            let delta: RosterDelta
            switch change {
            case .joined:
                delta = RosterDelta(base: version - 1, added: entries.filter { joined.contains($0.inboxId) }.map(Member.init),
                                    removed: [], renamed: [])
            case .departed(let inboxIds):
                delta = RosterDelta(base: version - 1, added: [], removed: inboxIds, renamed: [])
            case .renamed(let renames):
                delta = RosterDelta(base: version - 1, added: [], removed: [], renamed: renames)
            }
            let composed = try MessageComposer.compose(
                contentType: ContentType.rosterDelta, content: delta.encode(), fallback: delta.fallback,
                conversation: conversation, members: deltaTo, sender: identity, now: now)
            try composed.insert(now: now, on: conn)
        }
        let fullTo = fullToAll ? members : members.filter { joined.contains($0.inboxId) }
        try queueFullRoster(of: conversation, version: version, entries: entries, to: fullTo, from: identity, now: now, on: conn)
        return version
    }

    /// The full roster at `version`, to `members` only (the joiners, everyone at a multiple of
    /// `fullRosterEvery`, or one member that asked after a gap, `RosterRequests`).
    static func queueFullRoster(of conversation: DBConversation, version: Int64, entries: [MemberEntry]? = nil,
                                to members: [DBMember], from identity: Identity, now: Int64 = WallClock.nowMs(),
                                on conn: SQLiteConnection) throws {
        let recipients = members.filter { $0.inboxId != identity.inboxId }
        guard !recipients.isEmpty else { return }
        let entries = try entries ?? InvitationWriter.memberEntries(conversationId: conversation.id, on: conn)
        let name = conversation.name ?? ""
        let composed = try MessageComposer.compose(
            contentType: ContentType.membership,
            content: membershipContent(name: name, entries: entries, version: version),
            fallback: "\(name.isEmpty ? "Conversation" : name): \(entries.count) members",
            conversation: conversation, members: recipients, sender: identity, now: now)
        try composed.insert(now: now, on: conn)
    }

    /// The full roster's content: the name, every member with its profile name, and the
    /// roster version it sets (a version-1 device ignores `version`).
    static func membershipContent(name: String, entries: [MemberEntry], version: Int64?) -> [UInt8] {
        var object: JSONObject = ["name": .string(name), "members": .array(entries.map { RosterDelta.memberJSON(Member($0)) })]
        if let version { object.set("version", .int(version)) }
        return JSONWriter.bytes(.object(object))
    }
}

extension Member {
    init(_ entry: MemberEntry) {
        self.init(inboxId: entry.inboxId, publicKey: entry.publicKey, endpoint: entry.endpoint,
                  clientId: entry.clientId, profileName: entry.profileName ?? "")
    }
}
