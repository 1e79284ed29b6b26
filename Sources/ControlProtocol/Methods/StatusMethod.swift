import SottoWire

// MARK: - status

/// `status`: the daemon's one-screen summary (`sotto status`). Takes no params.
///
/// ```swift
/// let status = try client.call(StatusParams())
/// print(status.awakeCount, status.capacity, status.lastSeq)
/// ```
public struct StatusParams: ControlRequest {
    public typealias Result = StatusResult
    public static var method: ControlMethodName { .status }
    public static var summary: String { "The daemon's summary: inboxes awake and asleep, wake reasons, change feed position, damage." }
    public static var schemaName: String { "StatusParams" }
    public static var fields: [WireField] { [] }

    public init() {}
    public init(json: JSONValue) throws(WireError) { _ = try WireFields(json) }
    public var json: JSONValue { .object(JSONObject()) }
}

/// The result of `status`.
///
/// ```swift
/// status.wakeReasons["message"]   // how many inboxes a message woke
/// status.control?.connections     // open control connections
/// ```
public struct StatusResult: WireCodable {
    public var pid: Int64
    public var version: String
    public var groupDirectory: String
    public var runtimeDirectory: String
    public var conversations: Int64
    public var awakeCount: Int
    public var awake: [String]
    public var protectedAwake: [String]
    /// Inboxes a connected client has open (`sotto watch --conversation`), kept awake, with
    /// how many clients have each open.
    public var openInClient: [String: Int64]
    public var sleepingCount: Int
    public var capacity: Int
    public var wakeReasons: [String: Int64]
    public var unusedInboxReady: Bool
    public var unusedInboxHits: Int
    public var unusedInboxMisses: Int
    public var lastSeq: Int64
    public var walBytes: Int64
    public var checkpoints: CheckpointCounts
    public var uptimeMs: Int64
    public var damagedIdentities: [DamagedIdentity]
    public var databaseDamaged: String?
    /// Where the keystore's master key lives (docs/adr/0045), e.g. "in a key file, …
    /// (SOTTO_KEY_STORE=file): …", which `sotto status` prints on every run.
    public var masterKey: String?
    public var control: ControlFigures?
    /// Notices of deleted conversations still waiting for members (docs/adr/0034); nil when
    /// the database could not be read.
    public var outlivingNotices: OutlivingNoticeFigures?
    /// Bytes SQLite holds in the daemon now (page caches, statements; docs/adr/0053).
    public var sqliteHeap: SQLiteHeapFigures?

    public init(pid: Int64, version: String, groupDirectory: String, runtimeDirectory: String, conversations: Int64,
                awakeCount: Int, awake: [String], protectedAwake: [String], sleepingCount: Int, capacity: Int,
                wakeReasons: [String: Int64], unusedInboxReady: Bool, unusedInboxHits: Int, unusedInboxMisses: Int,
                lastSeq: Int64, walBytes: Int64, checkpoints: CheckpointCounts, uptimeMs: Int64,
                damagedIdentities: [DamagedIdentity], databaseDamaged: String? = nil, masterKey: String? = nil, control: ControlFigures? = nil,
                openInClient: [String: Int64] = [:], outlivingNotices: OutlivingNoticeFigures? = nil,
                sqliteHeap: SQLiteHeapFigures? = nil) {
        self.pid = pid
        self.version = version
        self.groupDirectory = groupDirectory
        self.runtimeDirectory = runtimeDirectory
        self.conversations = conversations
        self.awakeCount = awakeCount
        self.awake = awake
        self.protectedAwake = protectedAwake
        self.openInClient = openInClient
        self.sleepingCount = sleepingCount
        self.capacity = capacity
        self.wakeReasons = wakeReasons
        self.unusedInboxReady = unusedInboxReady
        self.unusedInboxHits = unusedInboxHits
        self.unusedInboxMisses = unusedInboxMisses
        self.lastSeq = lastSeq
        self.walBytes = walBytes
        self.checkpoints = checkpoints
        self.uptimeMs = uptimeMs
        self.damagedIdentities = damagedIdentities
        self.databaseDamaged = databaseDamaged
        self.masterKey = masterKey
        self.control = control
        self.outlivingNotices = outlivingNotices
        self.sqliteHeap = sqliteHeap
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(
            pid: try fields.int("pid"), version: try fields.string("version"),
            groupDirectory: try fields.string("groupDirectory"), runtimeDirectory: try fields.string("runtimeDirectory"),
            conversations: try fields.int("conversations", minimum: 0), awakeCount: try fields.count("awakeCount"),
            awake: try fields.strings("awake"), protectedAwake: try fields.strings("protectedAwake"),
            sleepingCount: try fields.count("sleepingCount"), capacity: Int(try fields.int("capacity", minimum: 1)),
            wakeReasons: try fields.integerMap("wakeReasons"), unusedInboxReady: try fields.bool("unusedInboxReady"),
            unusedInboxHits: try fields.count("unusedInboxHits"), unusedInboxMisses: try fields.count("unusedInboxMisses"),
            lastSeq: try fields.int("lastSeq", minimum: 0), walBytes: try fields.int("walBytes", minimum: 0),
            checkpoints: try fields.decode("checkpoints"), uptimeMs: try fields.int("uptimeMs"),
            damagedIdentities: try fields.array("damagedIdentities"),
            databaseDamaged: try fields.optionalString("databaseDamaged"), masterKey: try fields.optionalString("masterKey"),
            control: try fields.optionalDecode("control"),
            openInClient: try fields.optionalIntegerMap("openInClient") ?? [:],
            outlivingNotices: try fields.optionalDecode("outlivingNotices"),
            sqliteHeap: try fields.optionalDecode("sqliteHeap"))
    }

    public var json: JSONValue {
        var out = WireObjectBuilder()
        out["pid"] = .int(pid)
        out["version"] = .string(version)
        out["groupDirectory"] = .string(groupDirectory)
        out["runtimeDirectory"] = .string(runtimeDirectory)
        out["conversations"] = .int(conversations)
        out["awakeCount"] = .int(Int64(awakeCount))
        out["awake"] = .strings(awake)
        out["protectedAwake"] = .strings(protectedAwake)
        out["openInClient"] = .integerMap(openInClient)
        out["sleepingCount"] = .int(Int64(sleepingCount))
        out["capacity"] = .int(Int64(capacity))
        out["wakeReasons"] = .integerMap(wakeReasons)
        out["unusedInboxReady"] = .bool(unusedInboxReady)
        out["unusedInboxHits"] = .int(Int64(unusedInboxHits))
        out["unusedInboxMisses"] = .int(Int64(unusedInboxMisses))
        out["lastSeq"] = .int(lastSeq)
        out["walBytes"] = .int(walBytes)
        out["checkpoints"] = checkpoints.json
        out["uptimeMs"] = .int(uptimeMs)
        out["damagedIdentities"] = .list(damagedIdentities)
        out["databaseDamaged"] = databaseDamaged.map(JSONValue.string)
        out["masterKey"] = masterKey.map(JSONValue.string)
        out["control"] = control?.json
        out["outlivingNotices"] = outlivingNotices?.json
        out["sqliteHeap"] = sqliteHeap?.json
        return out.json
    }

    public static var schemaName: String { "Status" }
    public static var fields: [WireField] {
        [
            WireField("pid", .integer, "the daemon's process id"),
            WireField("version", .string, "the daemon's version"),
            WireField("groupDirectory", .string, "the data directory (database, keystore)"),
            WireField("runtimeDirectory", .string, "the directory holding the sockets"),
            WireField("conversations", .integer(minimum: 0), "conversations stored"),
            WireField("awakeCount", .integer(minimum: 0), "inboxes awake now"),
            WireField("awake", .strings, "the inbox ids awake now"),
            WireField("protectedAwake", .strings, "awake inboxes that are never slept (pending joins)"),
            WireField("openInClient", .integerMap, optional: true,
                      "inboxes kept awake because a connected client has their conversation open (subscribed to it), with how many clients"),
            WireField("sleepingCount", .integer(minimum: 0), "inboxes asleep"),
            WireField("capacity", .integer(minimum: 1), "most inboxes awake at once"),
            WireField("wakeReasons", .integerMap, "wake-ups since start, by reason"),
            WireField("unusedInboxReady", .boolean, "whether a prepared identity waits for the next new conversation"),
            WireField("unusedInboxHits", .integer(minimum: 0), "new conversations that used a prepared identity"),
            WireField("unusedInboxMisses", .integer(minimum: 0), "new conversations that had to create one"),
            WireField("lastSeq", .integer(minimum: 0), "the change feed's position (the newest change_log seq read)"),
            WireField("walBytes", .integer(minimum: 0), "the WAL file's size at the last check"),
            WireField("checkpoints", .object(CheckpointCounts.self), "WAL checkpoints since start"),
            WireField("uptimeMs", .integer, "milliseconds since the daemon started"),
            WireField("damagedIdentities", .array(DamagedIdentity.self), "identities that cannot be opened"),
            WireField("databaseDamaged", .string, optional: true, "present when the database is damaged: what happened and what to do"),
            WireField("masterKey", .string, optional: true, "where the keystore's master key lives (docs/adr/0045)"),
            WireField("control", .object(ControlFigures.self), optional: true, "the control socket's figures"),
            WireField("outlivingNotices", .object(OutlivingNoticeFigures.self), optional: true,
                      "notices of deleted conversations (explodes) still waiting for members who were not reached; absent when the database cannot be read"),
            WireField("sqliteHeap", .object(SQLiteHeapFigures.self), optional: true,
                      "what SQLite's page caches and statements hold in the daemon"),
        ]
    }
}

/// SQLite's heap in the daemon: what its page caches and statements hold now, and the most
/// they held at once (docs/adr/0053).
///
/// ```swift
/// status.sqliteHeap?.usedBytes    // e.g. 3_145_728
/// ```
public struct SQLiteHeapFigures: WireCodable {
    public var usedBytes: Int64
    public var highwaterBytes: Int64

    public init(usedBytes: Int64, highwaterBytes: Int64) {
        self.usedBytes = usedBytes
        self.highwaterBytes = highwaterBytes
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(usedBytes: try fields.int("usedBytes", minimum: 0), highwaterBytes: try fields.int("highwaterBytes", minimum: 0))
    }

    public var json: JSONValue {
        ["usedBytes": .int(usedBytes), "highwaterBytes": .int(highwaterBytes)]
    }

    public static var schemaName: String { "SQLiteHeapFigures" }
    public static var fields: [WireField] {
        [
            WireField("usedBytes", .integer(minimum: 0), "bytes SQLite holds now"),
            WireField("highwaterBytes", .integer(minimum: 0), "the most SQLite held at once since start"),
        ]
    }
}

/// WAL checkpoints since the daemon started, by mode.
///
/// ```swift
/// status.checkpoints.truncate
/// ```
public struct CheckpointCounts: WireCodable {
    public var passive: Int
    public var truncate: Int
    public var busy: Int

    public init(passive: Int, truncate: Int, busy: Int) {
        self.passive = passive
        self.truncate = truncate
        self.busy = busy
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(passive: try fields.count("passive"), truncate: try fields.count("truncate"), busy: try fields.count("busy"))
    }

    public var json: JSONValue {
        ["passive": .int(Int64(passive)), "truncate": .int(Int64(truncate)), "busy": .int(Int64(busy))]
    }

    public static var schemaName: String { "CheckpointCounts" }
    public static var fields: [WireField] {
        [
            WireField("passive", .integer(minimum: 0), "passive checkpoints"),
            WireField("truncate", .integer(minimum: 0), "truncating checkpoints"),
            WireField("busy", .integer(minimum: 0), "checkpoints that met a busy database"),
        ]
    }
}

/// An identity in the keystore that cannot be opened, and why.
///
/// ```swift
/// for identity in status.damagedIdentities { print(identity.clientId, identity.reason) }
/// ```
public struct DamagedIdentity: WireCodable {
    public var clientId: String
    public var reason: String

    public init(clientId: String, reason: String) {
        self.clientId = clientId
        self.reason = reason
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(clientId: try fields.string("clientId"), reason: try fields.string("reason"))
    }

    public var json: JSONValue { ["clientId": .string(clientId), "reason": .string(reason)] }

    public static var schemaName: String { "DamagedIdentity" }
    public static var fields: [WireField] {
        [WireField("clientId", .string, "the identity's client id"), WireField("reason", .string, "why it cannot be opened")]
    }
}

/// What the control socket holds and has refused (docs/adr/0010).
///
/// ```swift
/// status.control?.refused   // connections refused at the limit
/// ```
public struct ControlFigures: WireCodable {
    public var connections: Int
    public var maxConnections: Int
    public var bufferedBytes: Int
    public var refused: Int
    public var evicted: Int
    public var fileLimitHits: Int

    public init(connections: Int, maxConnections: Int, bufferedBytes: Int, refused: Int, evicted: Int, fileLimitHits: Int) {
        self.connections = connections
        self.maxConnections = maxConnections
        self.bufferedBytes = bufferedBytes
        self.refused = refused
        self.evicted = evicted
        self.fileLimitHits = fileLimitHits
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(connections: try fields.count("connections"), maxConnections: try fields.count("maxConnections"),
                  bufferedBytes: try fields.count("bufferedBytes"), refused: try fields.count("refused"),
                  evicted: try fields.count("evicted"), fileLimitHits: try fields.count("fileLimitHits"))
    }

    public var json: JSONValue {
        ["connections": .int(Int64(connections)), "maxConnections": .int(Int64(maxConnections)),
         "bufferedBytes": .int(Int64(bufferedBytes)), "refused": .int(Int64(refused)), "evicted": .int(Int64(evicted)),
         "fileLimitHits": .int(Int64(fileLimitHits))]
    }

    public static var schemaName: String { "ControlFigures" }
    public static var fields: [WireField] {
        [
            WireField("connections", .integer(minimum: 0), "open control connections"),
            WireField("maxConnections", .integer(minimum: 0), "the connection limit"),
            WireField("bufferedBytes", .integer(minimum: 0), "bytes buffered for all connections"),
            WireField("refused", .integer(minimum: 0), "connections refused at the limit"),
            WireField("evicted", .integer(minimum: 0), "idle connections closed to make room"),
            WireField("fileLimitHits", .integer(minimum: 0), "accepts that met the file descriptor limit"),
        ]
    }
}

/// The notices that outlive their conversation (docs/adr/0034): an explode's pushes to members
/// who were not reached before the conversation was deleted here, retried until delivered or
/// 30 days old.
///
/// ```swift
/// if let notices = status.outlivingNotices, notices.waiting > 0 { print(notices.waiting, notices.members) }
/// ```
public struct OutlivingNoticeFigures: WireCodable {
    public var waiting: Int64
    public var members: Int64

    public init(waiting: Int64, members: Int64) {
        self.waiting = waiting
        self.members = members
    }

    public init(json: JSONValue) throws(WireError) {
        let fields = try WireFields(json)
        self.init(waiting: try fields.int("waiting", minimum: 0), members: try fields.int("members", minimum: 0))
    }

    public var json: JSONValue { ["waiting": .int(waiting), "members": .int(members)] }

    public static var schemaName: String { "OutlivingNoticeFigures" }
    public static var fields: [WireField] {
        [
            WireField("waiting", .integer(minimum: 0), "notices waiting to be delivered"),
            WireField("members", .integer(minimum: 0), "distinct members they wait for"),
        ]
    }
}
