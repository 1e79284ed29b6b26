import ControlProtocol
import Dispatch
import Foundation
import SottoClient
import Synchronization
import Testing
import TestSupport

/// Issue #34 (docs/adr/0067): the conversation intents of the client library against real
/// daemons, and the timeline's short refresh falling back to the whole page when a change
/// names an older message.
@Suite("Client library actions", .serialized, .timeLimit(.minutes(6)))
struct ClientLibraryActionsTests {
    /// Runs an action and waits (on a semaphore, bounded) for its callback's outcome.
    static func outcome<Value: Sendable>(_ what: String,
                                         _ start: (@escaping @Sendable (Result<Value, ControlClient.Failure>) -> Void) -> Void) throws
        -> Result<Value, ControlClient.Failure> {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<Result<Value, ControlClient.Failure>?>(nil)
        start { result in
            box.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + 30) == .success, let result = box.withLock({ $0 }) else {
            throw Device.Failure(message: "\(what): no outcome within 30 s")
        }
        return result
    }

    static func value<Value: Sendable>(_ what: String,
                                       _ start: (@escaping @Sendable (Result<Value, ControlClient.Failure>) -> Void) -> Void) throws -> Value {
        switch try outcome(what, start) {
        case .success(let value): return value
        case .failure(let failure): throw Device.Failure(message: "\(what): \(failure)")
        }
    }

    @Test("create, invite, join, mute, remove and explode through ConversationActions; a refusal comes back as a failure")
    func actions() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let aliceActions = ConversationActions(socketPath: alice.runtime.controlSocketPath)
        let bobActions = ConversationActions(socketPath: bob.runtime.controlSocketPath)
        let list = LiveConversationList(socketPath: alice.runtime.controlSocketPath)
        defer { aliceActions.stop(); bobActions.stop(); list.stop() }
        list.start()

        let created = try Self.value("create") { aliceActions.create(name: "Lib", then: $0) }
        try alice.waitUntil("the live list shows it") { list.current.find(created.conversationId)?.name == "Lib" }
        let invite = try Self.value("invite") { aliceActions.invite(conversation: created.conversationId, expiresInMs: 3_600_000, then: $0) }
        #expect(invite.code.hasPrefix("sotto1:") && invite.expiresAtMs != nil)
        let joined = try Self.value("join") { bobActions.join(code: invite.code, profileName: "bob", then: $0) }
        #expect(joined.conversationId == created.conversationId)
        try bob.waitUntil("bob active") { try bob.conversation(created.conversationId)?["state"] as? String == "active" }
        try alice.waitUntil("alice lists bob") { try alice.conversation(created.conversationId)?["members"] as? Int == 2 }

        let muted = try Self.value("mute") { aliceActions.setMuted(true, conversation: created.conversationId, then: $0) }
        #expect(muted.muted)
        try alice.waitUntil("the list shows it muted") { list.current.find(created.conversationId)?.muted == true }

        // The creator cannot leave: the daemon's refusal is the callback's failure.
        if case .success = try Self.outcome("leave as the creator", { aliceActions.leave(conversation: created.conversationId, then: $0) }) {
            Issue.record("the creator's leave was accepted")
        }
        #expect(try alice.conversation(created.conversationId) != nil)

        let removed = try Self.value("remove") { aliceActions.remove(member: "bob", conversation: created.conversationId, then: $0) }
        #expect(removed.members == 1)
        try bob.waitUntil("bob's device deleted it") { try isGone(bob, created.conversationId) }

        let exploded = try Self.value("explode") { aliceActions.explode(conversation: created.conversationId, then: $0) }
        #expect(exploded.deleted)
        try alice.waitUntil("the live list lost it") { list.current.find(created.conversationId) == nil && list.current.generation > 0 }
        #expect(try isGone(alice, created.conversationId))
    }

    @Test("a status change of a message older than the short refresh's 8 still reaches the timeline")
    func olderStatusChangesReachTheTimeline() throws {
        let net = try Network(["alice", "bob"])
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let timeline = Timeline(conversation: trip, socketPath: alice.runtime.controlSocketPath)
        defer { timeline.stop() }
        timeline.start()
        try alice.waitUntil("loaded") { timeline.current.connected }

        // Bob's device is unreachable: twelve messages wait in alice's outbox as pending.
        bob.stopPushSocket()
        let texts = (1...12).map { "queued \($0)" }
        for text in texts { _ = try alice.json(["send", trip, text]) }
        func statuses() -> [String] {
            texts.map { text in timeline.current.items.first { $0.message.text == text }?.deliveryStatus ?? "missing" }
        }
        try alice.waitUntil("all twelve shown, pending") { statuses().allSatisfy { $0 == "pending" } }

        // Bob is back: the outbox retries them all; the oldest four are not among the latest 8.
        try bob.startPushSocket()
        try alice.waitUntil("every one shown sent or delivered", timeoutMs: 90_000) {
            statuses().allSatisfy { $0 == "sent" || $0 == "delivered" }
        }
        #expect(timeline.current.items.filter { texts.contains($0.message.text) }.count == 12, "each once")
    }
}
