import Foundation
import SottoCrypto
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/roster-v1.json (made from docs/protocol/roster.md by a
/// second implementation): the parse cases through `MessageContent.decode`, the sequences
/// through the worker's store writer on a real database, arrival by arrival.
@Suite("Roster vectors (docs/protocol/roster.md)")
struct RosterVectorTests {
    static let file = try! RosterVectors.load()

    @Test("parse", arguments: file.parse.map(\.name))
    func parse(_ name: String) throws {
        let c = try #require(Self.file.parse.first { $0.name == name })
        do {
            _ = try MessageContent.decode(contentType: c.contentType, content: c.content, fallback: nil)
            #expect(c.expect == "ok", "decoded, expected \(c.expect)")
        } catch {
            #expect(error.code.rawValue == c.expect, "\(error)")
        }
    }

    @Test("sequence", arguments: file.sequences.map(\.name))
    func sequence(_ name: String) throws {
        let s = try #require(Self.file.sequences.first { $0.name == name })
        let device = try RosterDevice(file: Self.file, start: s.start)
        for arrival in s.arrive {
            let before = try device.snapshot()
            let answer = device.receive(arrival)
            #expect(answer == arrival.expect, "\(arrival.id): \(answer)")
            if answer != "written" { #expect(try device.snapshot() == before, "a refusal or duplicate wrote") }
        }
        #expect(try device.roster() == s.end)
    }

    @Test("the vectors' members are real keys: each inboxId is SHA-256 of its public key")
    func membersAreRealKeys() throws {
        for (label, member) in Self.file.members {
            #expect(try PublicKey(hex: member.publicKey).inboxId == member.inboxId, "\(label)")
        }
    }
}
