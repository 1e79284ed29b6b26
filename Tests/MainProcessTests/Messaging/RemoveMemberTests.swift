import Foundation
import SharedStore
import Testing
import TestSupport

/// `sotto remove` with real daemons and workers: the removed device deletes the conversation,
/// the others drop the member, and nothing sent afterwards is sealed to it.
@Suite("Messaging: removing a member", .serialized)
struct RemoveMemberTests {
    @Test("the creator removes bob: bob's device deletes it, carol drops him, the next message goes to carol only")
    func removeAMember() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let bobInbox = try require(try bob.conversation(trip)?["inboxId"] as? String)

        let removed = try alice.json(["remove", trip, "bob"])
        #expect(removed["inboxId"] as? String == bobInbox)
        #expect((removed["members"] as? NSNumber)?.intValue == 2)
        try bob.waitUntil("bob's device deleted the conversation") { try isGone(bob, trip) }
        #expect(try bob.query("SELECT count(*) FROM inbox WHERE inboxId = ?", [.text(bobInbox)])[0].int64(0) == 0)
        try carol.waitUntil("carol dropped bob") { try carol.conversation(trip)?["members"] as? Int == 2 }
        #expect(try alice.conversation(trip)?["members"] as? Int == 2)

        let after = try alice.json(["send", trip, "after bob left"])
        let afterId = try require(after["messageId"] as? String)
        #expect((after["recipients"] as? NSNumber)?.intValue == 1)
        try carol.waitUntil("carol got it") { hasText(carol, trip, "after bob left") }
        #expect(try alice.query("SELECT count(*) FROM outbox WHERE messageId = ? AND memberInboxId = ?",
                                [.text(afterId), .text(bobInbox)])[0].int64(0) == 0)
    }

    @Test("refused and nothing changes: a member who is not the creator, the creator itself, unknown or ambiguous members")
    func refusals() throws {
        let net = try Network(["alice", "bob", "carol"])
        let (alice, bob, carol) = (net["alice"], net["bob"], net["carol"])
        let trip = try net.conversation(creator: alice, joiners: [bob, carol])
        let members = { try alice.query("SELECT inboxId FROM member WHERE conversationId = ? ORDER BY inboxId", [.text(trip)]).map { try $0.string(0) } }
        let before = try members()

        let notCreator = try carol.cli(["remove", trip, "bob"])
        #expect(notCreator.status != 0)
        #expect(notCreator.stderr.contains("only the conversation's creator"))
        let aliceInbox = try require(try alice.conversation(trip)?["inboxId"] as? String)
        for (member, says) in [(String(aliceInbox.prefix(10)), "cannot remove itself"), ("nobody", "no member"), ("ffffffffffffffff", "no member"),
                               ("", "must be a non-empty string")] {
            let result = try alice.cli(["remove", trip, member])
            #expect(result.status != 0, "\(member)")
            #expect(result.stderr.contains(says), "\(member): \(result.stderr)")
        }
        #expect(try members() == before)
        #expect(try carol.conversation(trip)?["members"] as? Int == 3)
    }
}
