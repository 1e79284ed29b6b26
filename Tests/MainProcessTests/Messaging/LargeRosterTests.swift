import DaemonStore
import SharedStore
import Foundation
import SottoCrypto
import TestSupport
import Testing
import SottoWire

/// Issue #17's user report: "a creator and 8 devices that join with ~45-byte profile names:
/// members 5–8 stay pendingJoin forever; the membership message is failed payload_too_large".
/// The creator's full roster now goes by reference when it does not fit one push
/// (docs/adr/0032). Nine real daemons, each with its real worker on its own socket.
@Suite("Messaging: a roster too large for one push", .serialized)
struct LargeRosterTests {
    @Test("a creator and 8 joiners with 45-byte profile names: every joiner active with the same 9-member roster; a joiner's message reaches all")
    func nineMembers() throws {
        let names = ["creator"] + (1...8).map { "joiner\($0)" }
        let net = try Network(names)
        let creator = net["creator"]
        let joiners = (1...8).map { net["joiner\($0)"] }
        // 45 bytes each, different from one another: "Member 1 ………"
        func profileName(_ device: Device) -> String {
            let base = "Member \(device.name.dropFirst("joiner".count)) of the long weekend trip to the seaside"
            return String(base.utf8.prefix(45))!
        }
        #expect(joiners.allSatisfy { profileName($0).utf8.count == 45 })

        // Each joiner must end active: without bodies by reference the 5th never does.
        let trip = try net.conversation(creator: creator, joiners: joiners, profileName: profileName)

        let roster = { (device: Device) throws -> [String] in
            let conn = try device.keyedConnection()
            let names = try MemberNamesRepository.profileNames(of: trip, on: conn)
            return try MemberRepository.members(of: trip, on: conn).map { "\($0.inboxId) \($0.role.rawValue) \(names[$0.inboxId] ?? "")" }
        }
        let expected = try roster(creator)
        #expect(expected.count == 9)
        for joiner in joiners {
            try joiner.waitUntil("\(joiner.name) lists 9 members") { try joiner.conversation(trip)?["members"] as? Int == 9 }
            #expect(try joiner.conversation(trip)?["state"] as? String == "active")
            #expect(try roster(joiner) == expected, "\(joiner.name)'s roster")
        }
        // Each join: the full roster to the joiner, a delta to the members before it
        // (docs/protocol/roster.md §6); every device ends at the creator's version.
        let sent = { (type: String) throws -> Int64 in
            try creator.query("SELECT count(*) FROM message WHERE isOutgoing = 1 AND contentType = ?", [.text(type)])[0].int64(0)
        }
        #expect(try sent(ContentType.membership) == 8 && sent(ContentType.rosterDelta) == 7)
        for device in [creator] + joiners {
            try device.waitUntil("\(device.name) at roster version 8") {
                try device.query("SELECT rosterVersion FROM conversation WHERE id = ?", [.text(trip)])[0].int64(0) == 8
            }
        }
        // The last roster went by reference, and no membership failed anywhere.
        let membership = try creator.query("""
            SELECT o.payload FROM outbox o JOIN message m ON m.id = o.messageId
            WHERE m.contentType = 'sotto/membership:1.0' ORDER BY m.sentAt DESC LIMIT 1
            """).map { try PushPayload.decode(try $0.blob(0)) }
        #expect(membership.first?.body != nil)
        try creator.waitUntil("every push of the creator delivered") {
            try creator.query("SELECT count(*) FROM outbox WHERE state != 'delivered'")[0].int64(0) == 0
        }
        #expect(try creator.query("SELECT count(*) FROM outbox_body")[0].int64(0) == 0)

        let last = joiners[7]
        _ = try last.json(["send", trip, "see you all at the station"])
        for device in [creator] + joiners.dropLast() {
            try device.waitUntil("\(device.name) has the joiner's message") { hasText(device, trip, "see you all at the station") }
        }
        try last.waitUntil("the joiner's message sent to all 8") { deliveryStatus(last, trip, "see you all at the station") == "delivered" }
    }
}
