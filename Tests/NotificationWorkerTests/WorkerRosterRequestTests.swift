import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// `sotto/roster_request:1.0` and `sotto/rename:1.0` (docs/protocol/roster.md §9–§10) through
/// the real worker on the creator's device: a member's request is recorded as one row per
/// member for the daemon to answer; a flood rewrites that row; everything else is refused with
/// nothing written.
@Suite("Worker: roster requests and renames")
struct WorkerRosterRequestTests {
    private func creatorsDevice() throws -> WorkerFixture {
        try WorkerFixture(vectors: try #require(try Vectors.load()), recipientCreates: true)
    }

    private static func request(_ version: Int64) -> [UInt8] { RosterRequest(version: version).encode() }

    private static func requests(_ f: WorkerFixture) throws -> [String] {
        try f.open().query("SELECT inboxId || ' ' || version || ' ' || owed FROM roster_request ORDER BY inboxId")
            .map { try $0.string(0) }
    }

    @Test("a member's request is recorded once per member, owed an answer; a flood of 20 rewrites the one row, and no message is stored")
    func memberRequestIsRecorded() throws {
        let f = try creatorsDevice()
        let sam = f.senderKey.publicKey.inboxId
        let first = try f.seal(contentType: ContentType.rosterRequest, content: Self.request(3))
        #expect(try WorkerRun.deliver(first.payload, mode: .acceptYes, fixture: f) == .ok(messageId: first.messageId, duplicate: false))
        #expect(try Self.requests(f) == ["\(sam) 3 1"])
        // The daemon answered it; then the member (or a replayer) sends 20 more.
        try f.open().run("UPDATE roster_request SET owed = 0, answeredAt = ?", [.integer(f.now)])
        for version in 0..<20 {
            let push = try f.seal(contentType: ContentType.rosterRequest, content: Self.request(Int64(version)))
            #expect(try WorkerRun.deliver(push.payload, mode: .acceptYes, fixture: f) == .ok(messageId: push.messageId, duplicate: false))
        }
        #expect(try Self.requests(f) == ["\(sam) 19 1"])
        // The rate limit's clock survives the flood: the daemon sees when it last answered.
        #expect(try f.open().queryOne("SELECT answeredAt FROM roster_request")?.int64(0) == f.now)
        #expect(try f.open().queryOne("SELECT count(*) FROM message")?.int64(0) == 0)
        #expect(try f.receiptsDue().isEmpty, "a roster request owes no receipt")
    }

    @Test("refused, nothing written: a stranger, a removed member, a forged signer, the creator itself, a member's device, garbage",
          arguments: ["stranger", "removed member", "forged signer", "creator asks itself", "to a member's device",
                      "not an object", "no version", "version -1", "version 2^53", "version a string", "version 1.5",
                      "empty content"])
    func refusals(_ attempt: String) throws {
        let f = attempt == "to a member's device"
            ? try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
            : try creatorsDevice()
        let stranger = PrivateKey.generate()
        let recipientKey = try PrivateKey(bytes: f.recipient.privateKey)
        if attempt == "removed member" {
            let conn = try f.open()
            try conn.immediateTransaction { () throws(StoreError) in
                try RosterWriter.depart(inboxId: f.senderKey.publicKey.inboxId, conversationId: f.recipient.conversationId, on: conn)
            }
        }
        let valid = Self.request(0)
        let payload: [UInt8]
        var code = "malformed_message"
        switch attempt {
        case "stranger":
            payload = try f.seal(contentType: ContentType.rosterRequest, content: valid, signer: stranger).payload
            code = "unknown_sender"
        case "removed member", "to a member's device":
            payload = try f.seal(contentType: ContentType.rosterRequest, content: valid).payload
            code = "unknown_sender"
        case "creator asks itself":
            payload = try f.seal(contentType: ContentType.rosterRequest, content: valid, signer: recipientKey).payload
            code = "unknown_sender"
        case "forged signer":
            // Claims the member's inbox and key; signed by a stranger.
            let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: f.recipient.conversationId,
                                            sentAtMs: f.now, contentType: ContentType.rosterRequest, content: valid,
                                            fallback: nil, signer: stranger)
            var object = try #require(try JSONParser.parse(signed.encode()).object)
            object.set("senderInboxId", .string(f.senderKey.publicKey.inboxId))
            object.set("senderPublicKey", .string(f.senderKey.publicKey.hex))
            payload = try f.seal(plaintext: JSONWriter.bytes(.object(object)))
            code = "bad_signature"
        default:
            let content: String = switch attempt {
            case "not an object": "[0]"
            case "no version": #"{"v":1}"#
            case "version -1": #"{"version":-1}"#
            case "version 2^53": #"{"version":9007199254740992}"#
            case "version a string": #"{"version":"3"}"#
            case "version 1.5": #"{"version":1.5}"#
            default: ""
            }
            payload = try f.seal(contentType: ContentType.rosterRequest, content: Array(content.utf8)).payload
        }
        let before = try f.tableContents()
        #expect(WorkerRun.errorCode(try WorkerRun.deliver(payload, mode: .acceptYes, fixture: f)) == code, "\(attempt)")
        #expect(try f.tableContents() == before, "\(attempt) changed the database")
    }

    private static func rename(_ object: JSONValue) -> [UInt8] { JSONWriter.bytes(object) }

    private static func renames(_ f: WorkerFixture) throws -> [String] {
        let conn = try f.open()
        return try conn.query("SELECT inboxId, profileName, owed FROM roster_rename ORDER BY inboxId").map { row in
            let inboxId = try row.string(0)
            let name = try conn.openedText(row.values[1], .rosterRenameProfileName, conversationId: f.recipient.conversationId,
                                           rowId: inboxId) ?? "?"
            return "\(inboxId) \(name) \(try row.int64(2))"
        }
    }

    @Test("a member's rename is recorded for the signer, the latest name wins; a content naming another member still renames only the signer")
    func renameIsRecordedForTheSigner() throws {
        let f = try creatorsDevice()
        let sam = f.senderKey.publicKey.inboxId
        let other = try #require(f.vectors.members.first { $0.inboxId != f.recipient.inboxId }).inboxId
        let first = try f.seal(contentType: ContentType.rename, content: Self.rename(["profileName": "Samantha"]))
        #expect(try WorkerRun.deliver(first.payload, mode: .acceptYes, fixture: f) == .ok(messageId: first.messageId, duplicate: false))
        let hostile = try f.seal(contentType: ContentType.rename,
                                 content: Self.rename(["profileName": "Mallory", "inboxId": .string(other)]))
        #expect(try WorkerRun.deliver(hostile.payload, mode: .acceptYes, fixture: f) == .ok(messageId: hostile.messageId, duplicate: false))
        #expect(try Self.renames(f) == ["\(sam) Mallory 1"])
        // The worker never sets a name itself: the creator's daemon does, with the delta.
        #expect(try MemberNamesRepository.profileName(conversationId: f.recipient.conversationId, inboxId: other, on: f.open())
                != "Mallory")
        #expect(try f.open().queryOne("SELECT count(*) FROM message")?.int64(0) == 0)
    }

    @Test("a rename refused, nothing written: a stranger, a removed member, the creator, a member's device, bad names",
          arguments: ["stranger", "removed member", "creator renames itself", "to a member's device", "empty name",
                      "101 bytes", "escape sequence", "DEL", "no profileName", "profileName a number", "not an object"])
    func renameRefusals(_ attempt: String) throws {
        let f = attempt == "to a member's device"
            ? try WorkerFixture(vectors: try #require(try Vectors.load()), holdsCreatorKey: true)
            : try creatorsDevice()
        if attempt == "removed member" {
            let conn = try f.open()
            try conn.immediateTransaction { () throws(StoreError) in
                try RosterWriter.depart(inboxId: f.senderKey.publicKey.inboxId, conversationId: f.recipient.conversationId, on: conn)
            }
        }
        let good = Self.rename(["profileName": "Bea"])
        let (content, signer, code): ([UInt8], PrivateKey?, String) = switch attempt {
        case "stranger": (good, PrivateKey.generate(), "unknown_sender")
        case "removed member", "to a member's device": (good, nil, "unknown_sender")
        case "creator renames itself": (good, try PrivateKey(bytes: f.recipient.privateKey), "unknown_sender")
        case "empty name": (Self.rename(["profileName": ""]), nil, "malformed_message")
        case "101 bytes": (Self.rename(["profileName": .string(String(repeating: "b", count: 101))]), nil, "malformed_message")
        case "escape sequence": (Self.rename(["profileName": "Bea\u{1b}[2J"]), nil, "malformed_message")
        case "DEL": (Self.rename(["profileName": "Bea\u{7f}"]), nil, "malformed_message")
        case "no profileName": (Self.rename([:]), nil, "malformed_message")
        case "profileName a number": (Self.rename(["profileName": 7]), nil, "malformed_message")
        default: (Self.rename(["Bea"]), nil, "malformed_message")
        }
        let before = try f.tableContents()
        let push = try f.seal(contentType: ContentType.rename, content: content, signer: signer)
        #expect(WorkerRun.errorCode(try WorkerRun.deliver(push.payload, mode: .acceptYes, fixture: f)) == code, "\(attempt)")
        #expect(try f.tableContents() == before, "\(attempt) changed the database")
    }
}
