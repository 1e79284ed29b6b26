import SottoWire

// MARK: - subscribe

/// `subscribe`: streams `change` notifications on this connection until it closes; with
/// `since`, first replays every change after that seq (`sotto watch --since`); with
/// `conversation` (an id or a unique prefix), only that conversation's changes.
///
/// ```swift
/// var changes = try client.subscribe(SubscribeParams(since: 120))
/// while let change = try changes.next() { print(change.seq, change.kind) }
/// ```
public struct SubscribeParams: ControlRequest {
    public typealias Result = SubscribeResult
    public static var method: ControlMethodName { .subscribe }
    public static var summary: String {
        "Stream change notifications on this connection; with since, replay every change after that seq first; with conversation, only its changes."
    }
    public static var schemaName: String { "SubscribeParams" }
    public static var fields: [WireField] {
        [
            WireField("since", .integer(minimum: 0), optional: true, "replay the changes after this seq first (default: live changes only)"),
            WireField("conversation", .string, optional: true, "only this conversation's changes (an id or a unique prefix; default: all)"),
        ]
    }

    public var since: Int64?
    public var conversation: String?

    public init(since: Int64? = nil, conversation: String? = nil) {
        self.since = since
        self.conversation = conversation
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        let since = try fields.optionalInt("since")
        if let since, since < 0 { throw WireError("'since' must be ≥ 0") }
        self.init(since: since, conversation: try fields.optionalString("conversation"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["since"] = since.map(JSONValue.int)
        out["conversation"] = conversation.map(JSONValue.string)
        return out.json
    }
}

/// The result of `subscribe`: the seq the feed is at (replayed changes go up to it), and the
/// changes the replay could not read, if any.
///
/// ```swift
/// if let gap = subscribed.gap { print("missing after #\(gap.afterSeq): \(gap.reason)") }
/// ```
public struct SubscribeResult: WireCodable {
    public var lastSeq: Int64
    public var gap: ChangeGap?
    /// The conversation the subscription is limited to (the full id of `conversation`).
    public var conversationId: String?

    public init(lastSeq: Int64, gap: ChangeGap? = nil, conversationId: String? = nil) {
        self.lastSeq = lastSeq
        self.gap = gap
        self.conversationId = conversationId
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(lastSeq: try fields.int("lastSeq", minimum: 0), gap: try fields.optionalDecode("gap"),
                  conversationId: try fields.optionalString("conversationId"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["lastSeq"] = .int(lastSeq)
        out["gap"] = gap?.json
        out["conversationId"] = conversationId.map(JSONValue.string)
        return out.json
    }

    public static var schemaName: String { "SubscribeResult" }
    public static var fields: [WireField] {
        [
            WireField("lastSeq", .integer(minimum: 0), "the feed's position: replayed changes go up to it"),
            WireField("gap", .object(ChangeGap.self), optional: true, "changes the replay could not read (a damaged database page)"),
            WireField("conversationId", .string, optional: true, "the conversation the subscription is limited to"),
        ]
    }
}

/// Changes a `subscribe` replay could not read: reported, never skipped in silence.
///
/// ```swift
/// "changes after #\(gap.afterSeq) before \(gap.resumedAtSeq.map { "#\($0)" } ?? "the end") cannot be read"
/// ```
public struct ChangeGap: WireCodable {
    /// The last change delivered before the gap.
    public var afterSeq: Int64
    /// The first change delivered after it; nil when nothing after it could be read.
    public var resumedAtSeq: Int64?
    public var reason: String
    /// What to do about it.
    public var remedy: String

    public init(afterSeq: Int64, resumedAtSeq: Int64?, reason: String, remedy: String) {
        self.afterSeq = afterSeq
        self.resumedAtSeq = resumedAtSeq
        self.reason = reason
        self.remedy = remedy
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(afterSeq: try fields.int("afterSeq", minimum: 0), resumedAtSeq: try fields.optionalInt("resumedAtSeq", minimum: 0),
                  reason: try fields.string("reason"), remedy: try fields.string("remedy"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["afterSeq"] = .int(afterSeq)
        out["reason"] = .string(reason)
        out["resumedAtSeq"] = resumedAtSeq.map(JSONValue.int)
        out["remedy"] = .string(remedy)
        return out.json
    }

    public static var schemaName: String { "ChangeGap" }
    public static var fields: [WireField] {
        [
            WireField("afterSeq", .integer(minimum: 0), "the last change delivered before the gap"),
            WireField("resumedAtSeq", .integer(minimum: 0), optional: true, "the first change delivered after it"),
            WireField("reason", .string, "why those changes cannot be read"),
            WireField("remedy", .string, "what to do about it"),
        ]
    }
}

// MARK: - change notification

/// The `change` notification: one committed row of `change_log`, by any process; a new
/// message also carries what `sotto watch` prints for it, and a new or changed message the
/// message itself as `readMessages` returns it (`message`), so that a client shows it without
/// reading it back (docs/adr/0070).
///
/// ```swift
/// if change.kind == "messageInserted", let text = change.text { print(change.senderName ?? "?", text) }
/// if let message = change.message { timeline.upsert(message) }   // no readMessages round trip
/// ```
public struct ChangeNotification: WireCodable {
    public var seq: Int64
    public var kind: String
    public var writerPid: Int64
    public var createdAtMs: Int64
    public var conversationId: String?
    public var entityId: String?
    public var text: String?
    public var outgoing: Bool?
    public var senderInboxId: String?
    public var senderName: String?
    /// messageInserted, messageStatusChanged: the message as `readMessages` returns it, read
    /// when the feed applied the change (its status then, with its pushes for an outgoing one).
    public var message: MessageInfo?

    public init(seq: Int64, kind: String, writerPid: Int64, createdAtMs: Int64, conversationId: String? = nil,
                entityId: String? = nil, text: String? = nil, outgoing: Bool? = nil, senderInboxId: String? = nil,
                senderName: String? = nil, message: MessageInfo? = nil) {
        self.seq = seq
        self.kind = kind
        self.writerPid = writerPid
        self.createdAtMs = createdAtMs
        self.conversationId = conversationId
        self.entityId = entityId
        self.text = text
        self.outgoing = outgoing
        self.senderInboxId = senderInboxId
        self.senderName = senderName
        self.message = message
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(seq: try fields.int("seq", minimum: 1), kind: try fields.string("kind"), writerPid: try fields.int("writerPid"),
                  createdAtMs: try fields.int("createdAtMs"), conversationId: try fields.optionalString("conversationId"),
                  entityId: try fields.optionalString("entityId"), text: try fields.optionalString("text"),
                  outgoing: try fields.optionalBool("outgoing"), senderInboxId: try fields.optionalString("senderInboxId"),
                  senderName: try fields.optionalString("senderName"), message: try fields.optionalDecode("message"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["seq"] = .int(seq)
        out["kind"] = .string(kind)
        out["writerPid"] = .int(writerPid)
        out["createdAtMs"] = .int(createdAtMs)
        out["conversationId"] = conversationId.map(JSONValue.string)
        out["entityId"] = entityId.map(JSONValue.string)
        out["text"] = text.map(JSONValue.string)
        out["outgoing"] = outgoing.map(JSONValue.bool)
        out["senderInboxId"] = senderInboxId.map(JSONValue.string)
        out["senderName"] = senderName.map(JSONValue.string)
        out["message"] = message?.json
        return out.json
    }

    public static var schemaName: String { "Change" }
    public static var fields: [WireField] {
        [
            WireField("seq", .integer(minimum: 1), "the change_log seq: increasing, no gaps on one subscription"),
            WireField("kind", .string, "what changed, e.g. messageInserted, conversationUpdated"),
            WireField("writerPid", .integer, "the process that committed it (the daemon or a worker)"),
            WireField("createdAtMs", .integer, "when it was committed"),
            WireField("conversationId", .string, optional: true, "the conversation it concerns"),
            WireField("entityId", .string, optional: true, "the row it concerns, e.g. the message id"),
            WireField("text", .string, optional: true, "messageInserted: the message's display text"),
            WireField("outgoing", .boolean, optional: true, "messageInserted: whether this device sent it"),
            WireField("senderInboxId", .string, optional: true, "messageInserted: the sender's inbox id"),
            WireField("senderName", .string, optional: true, "messageInserted, incoming: the sender's profile name when known"),
            WireField("message", .object(MessageInfo.self), optional: true,
                      "messageInserted, messageStatusChanged: the message as readMessages returns it, read when the change was "
                      + "applied (a client shows it without reading it back; absent when the row could not be read)"),
        ]
    }
}
