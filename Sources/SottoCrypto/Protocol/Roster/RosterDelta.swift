import SottoWire

/// One change of a conversation's roster, `sotto/roster_delta:1.0` (docs/protocol/roster.md):
/// the members it adds, removes and renames, and the roster versions it applies to (`base`)
/// and produces (`version`, always `base + 1`). Only the creator sends it; a device applies it
/// when its roster is at `base`, keeps it while its roster is older, and ignores it when newer.
///
/// ```swift
/// let delta = RosterDelta(base: 4, added: [newcomer], removed: [], renamed: [])
/// delta.version          // 5
/// delta.encode()         // {"base":4,"version":5,"added":[{…}],"removed":[],"renamed":[]}
/// ```
public struct RosterDelta: Sendable, Equatable {
    /// A member's new profile name.
    public struct Rename: Sendable, Equatable {
        public let inboxId: String
        public let profileName: String

        public init(inboxId: String, profileName: String) {
            self.inboxId = inboxId
            self.profileName = profileName
        }
    }

    /// The highest version a roster may reach (2^53 - 1: exact in every JSON implementation).
    public static let maxVersion: Int64 = 9_007_199_254_740_991

    public let base: Int64
    public let added: [Member]
    public let removed: [String]
    public let renamed: [Rename]

    public var version: Int64 { base + 1 }

    public init(base: Int64, added: [Member], removed: [String], renamed: [Rename]) {
        self.base = base
        self.added = added
        self.removed = removed
        self.renamed = renamed
    }

    /// The content bytes, keys in the order docs/protocol/roster.md shows.
    public func encode() -> [UInt8] {
        JSONWriter.bytes([
            "base": .int(base), "version": .int(version),
            "added": .array(added.map(Self.memberJSON)),
            "removed": .array(removed.map { .string($0) }),
            "renamed": .array(renamed.map { ["inboxId": .string($0.inboxId), "profileName": .string($0.profileName)] }),
        ])
    }

    /// A member as both the delta's `added` and the full roster's `members` list it.
    public static func memberJSON(_ member: Member) -> JSONValue {
        [
            "inboxId": .string(member.inboxId), "publicKey": .string(member.publicKey),
            "endpoint": .string(member.endpoint), "clientId": .string(member.clientId),
            "profileName": .string(member.profileName),
        ]
    }

    /// The fallback text a version-1 device shows for it.
    public var fallback: String {
        var parts: [String] = []
        if !added.isEmpty { parts.append("\(added.count) joined") }
        if !removed.isEmpty { parts.append("\(removed.count) left") }
        if !renamed.isEmpty { parts.append("\(renamed.count) renamed") }
        return "Members changed: " + parts.joined(separator: ", ")
    }

    /// The shape rules of docs/protocol/roster.md §3; every failure is `malformed_message`.
    static func decode(_ value: JSONValue, member: (JSONValue) throws(PushError) -> Member) throws(PushError) -> RosterDelta {
        func fail(_ why: String) -> PushError { PushError(.malformedMessage, "roster delta \(why)") }
        guard let base = value["base"]?.int64, base >= 0, base < maxVersion else {
            throw fail("base is missing or not an integer from 0 to 2^53-2")
        }
        guard value["version"]?.int64 == base + 1 else { throw fail("version is not base + 1") }
        guard let addedJSON = value["added"]?.array, let removedJSON = value["removed"]?.array,
              let renamedJSON = value["renamed"]?.array
        else { throw fail("added, removed or renamed is missing or not a list") }
        guard addedJSON.count + removedJSON.count + renamedJSON.count >= 1 else { throw fail("changes nothing") }
        guard addedJSON.count <= ContentLimits.maxMembers, removedJSON.count <= ContentLimits.maxMembers,
              renamedJSON.count <= ContentLimits.maxMembers
        else { throw fail("lists more than \(ContentLimits.maxMembers) members in one list") }

        var seen: Set<String> = []
        var added: [Member] = []
        for item in addedJSON {
            let entry = try member(item)
            guard seen.insert(entry.inboxId).inserted else { throw fail("names a member twice") }
            added.append(entry)
        }
        var removed: [String] = []
        for item in removedJSON {
            guard let inboxId = item.string, ProtocolIds.isInboxId(inboxId) else { throw fail("removed holds a malformed inboxId") }
            guard seen.insert(inboxId).inserted else { throw fail("names a member twice") }
            removed.append(inboxId)
        }
        var renamed: [Rename] = []
        for item in renamedJSON {
            guard item.object != nil, let inboxId = item["inboxId"]?.string, ProtocolIds.isInboxId(inboxId),
                  let name = item["profileName"]?.string, MessageContent.isProfileName(name)
            else { throw fail("renamed holds a malformed entry") }
            guard seen.insert(inboxId).inserted else { throw fail("names a member twice") }
            renamed.append(Rename(inboxId: inboxId, profileName: name))
        }
        return RosterDelta(base: base, added: added, removed: removed, renamed: renamed)
    }
}
