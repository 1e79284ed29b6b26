import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// The 1,000-member limit and bounds of docs/protocol/roster.md that the vectors do not carry
/// (they would need a thousand keys), through the parser and the worker's writer.
@Suite("Roster limits")
struct RosterLimitTests {
    static let others: [Member] = (0..<1_000).map { index in
        let key = PrivateKey.generate().publicKey
        return Member(inboxId: key.inboxId, publicKey: key.hex, endpoint: "unix:/run/user/1000/m\(index).sock",
                      clientId: SecureRandom.uuidV4(), profileName: "M\(index)")
    }

    func fullRoster(_ members: [Member], version: Int64) -> [UInt8] {
        JSONWriter.bytes(.object(["name": "Trip", "members": .array(members.map(RosterDelta.memberJSON)), "version": .int(version)]))
    }

    @Test("a full roster of 1,000 members parses; of 1,001 it is malformed")
    func fullRosterLimit() throws {
        let thousand = try MessageContent.decode(contentType: ContentType.membership,
                                                 content: fullRoster(Array(Self.others), version: 1), fallback: nil)
        guard case .membership(_, let members, 1) = thousand else { Issue.record("not a versioned roster"); return }
        #expect(members.count == 1_000)
        let extra = PrivateKey.generate().publicKey
        let over = Self.others + [Member(inboxId: extra.inboxId, publicKey: extra.hex, endpoint: "unix:/x.sock",
                                         clientId: SecureRandom.uuidV4(), profileName: "")]
        #expect { try MessageContent.decode(contentType: ContentType.membership, content: fullRoster(over, version: 1), fallback: nil) }
            throws: { ($0 as? PushError)?.code == .malformedMessage }
    }

    @Test("a delta that would make 1,001 members is refused and writes nothing; one that makes 1,000 applies")
    func deltaLimit() throws {
        let vectors = try RosterVectors.load()
        let device = try RosterDevice(file: vectors, start: .init(version: 3, members: ["C", "R"], pending: []))
        // 997 more: 999 members at version 4.
        let first = RosterDelta(base: 3, added: Array(Self.others.prefix(997)), removed: [], renamed: [])
        #expect(device.receive(arrival(first, id: "first")) == "written")
        #expect(try device.roster().members.count == 999)
        // Two more would be 1,001.
        let over = RosterDelta(base: 4, added: Array(Self.others[997..<999]), removed: [], renamed: [])
        let before = try device.snapshot()
        #expect(device.receive(arrival(over, id: "over")) == "malformed_message")
        #expect(try device.snapshot() == before)
        // One more, while another leaves in the same change: 999; then one more: exactly 1,000.
        let swap = RosterDelta(base: 4, added: [Self.others[997]], removed: [Self.others[0].inboxId], renamed: [])
        #expect(device.receive(arrival(swap, id: "swap")) == "written")
        #expect(try device.roster().members.count == 999)
        let last = RosterDelta(base: 5, added: [Self.others[998]], removed: [], renamed: [])
        #expect(device.receive(arrival(last, id: "last")) == "written")
        let roster = try device.roster()
        #expect(roster.version == 6 && roster.members.count == 1_000 && roster.members.contains("C"))
    }

    @Test("deltas that arrive in reverse order apply in version order once the first arrives")
    func reverseOrder() throws {
        let vectors = try RosterVectors.load()
        let device = try RosterDevice(file: vectors, start: .init(version: 0, members: ["C", "R"], pending: []))
        let deltas = (0..<50).map { RosterDelta(base: Int64($0), added: [Self.others[$0]], removed: [], renamed: []) }
        for delta in deltas.reversed() { #expect(device.receive(arrival(delta, id: "d\(delta.base)")) == "written") }
        let roster = try device.roster()
        #expect(roster.version == 50 && roster.members.count == 52 && roster.pending.isEmpty)
        // The order of changes is the order of versions: a member added then removed is gone
        // even when the removal arrived first.
        let add = RosterDelta(base: 50, added: [Self.others[60]], removed: [], renamed: [])
        let remove = RosterDelta(base: 51, added: [], removed: [Self.others[60].inboxId], renamed: [])
        #expect(device.receive(arrival(remove, id: "remove")) == "written")
        #expect(device.receive(arrival(add, id: "add")) == "written")
        #expect(try device.roster().version == 52)
        #expect(try !device.roster().members.contains(Self.others[60].inboxId))
    }

    @Test("renames set the profile name shown for the member")
    func rename() throws {
        let vectors = try RosterVectors.load()
        let device = try RosterDevice(file: vectors, start: .init(version: 1, members: ["C", "R", "A"], pending: []))
        let a = vectors.members["A"]!.inboxId
        let delta = RosterDelta(base: 1, added: [], removed: [], renamed: [.init(inboxId: a, profileName: "Anna")])
        #expect(device.receive(arrival(delta, id: "rename")) == "written")
        #expect(try MemberNamesRepository.profileName(conversationId: device.conversationId, inboxId: a, on: device.conn) == "Anna")
    }

    private func arrival(_ delta: RosterDelta, id: String) -> RosterVectors.Arrival {
        RosterVectors.Arrival(id: String(Hex.encode(SHA256.hash(Array(id.utf8))).prefix(32)), from: "C",
                              contentType: ContentType.rosterDelta, content: delta.encode(), expect: "")
    }
}
