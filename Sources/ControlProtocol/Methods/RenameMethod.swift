import SottoWire

// MARK: - rename

/// `rename`: this device's member changes its own profile name in a conversation (`sotto
/// rename`). A member's device asks the creator (`sotto/rename:1.0`), whose device tells every
/// member with a roster delta; the creator's device tells them at once (docs/protocol/roster.md §10).
///
/// ```swift
/// let renamed = try client.call(RenameParams(conversation: "ab12", name: "Bea"))
/// renamed.members   // 1 (the creator, asked) or every other member (on the creator's device)
/// ```
public struct RenameParams: ControlRequest {
    public typealias Result = RenameResult
    public static var method: ControlMethodName { .rename }
    public static var summary: String { "Change this device's profile name in a conversation; every member is told." }
    public static var errors: [RPCErrorCode] { [.notFound, .refused] }
    public static var schemaName: String { "RenameParams" }
    public static var fields: [WireField] {
        [
            WireField("conversation", .nonEmptyString, "conversation id, or a unique prefix of it"),
            WireField("name", .nonEmptyString, "the new profile name: 1 to 100 bytes of UTF-8, no control character"),
        ]
    }

    public var conversation: String
    public var name: String

    public init(conversation: String, name: String) {
        self.conversation = conversation
        self.name = name
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversation: try fields.nonEmptyString("conversation"), name: try fields.nonEmptyString("name"))
    }

    public var json: JSONValue { ["conversation": .string(conversation), "name": .string(name)] }
}

/// The result of `rename`.
///
/// ```swift
/// "renamed to \(renamed.profileName) in \(renamed.conversationId.prefix(12))"
/// ```
public struct RenameResult: WireCodable {
    public var conversationId: String
    public var profileName: String
    public var members: Int

    public init(conversationId: String, profileName: String, members: Int) {
        self.conversationId = conversationId
        self.profileName = profileName
        self.members = members
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(conversationId: try fields.string("conversationId"), profileName: try fields.string("profileName"),
                  members: try fields.count("members"))
    }

    public var json: JSONValue {
        ["conversationId": .string(conversationId), "profileName": .string(profileName), "members": .int(Int64(members))]
    }

    public static var schemaName: String { "RenameResult" }
    public static var fields: [WireField] {
        [
            WireField("conversationId", .string, "the conversation"),
            WireField("profileName", .string, "the new profile name"),
            WireField("members", .integer(minimum: 0),
                      "whom the change is sealed to: 1 (the creator, who tells the others) or, on the creator's device, every other member"),
        ]
    }
}
