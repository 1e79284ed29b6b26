@testable import DaemonCore
import Testing

func message(_ id: String, at sentAtMs: Int64, in conversationId: String = "c1",
             outgoing: Bool = false, text: String? = nil) -> TimelineMessage {
    TimelineMessage(id: id, conversationId: conversationId, senderInboxId: outgoing ? "me" : "them",
                    sentAtMs: sentAtMs, text: text ?? "text of \(id)", isOutgoing: outgoing,
                    deliveryStatus: outgoing ? .pending : .received)
}

@Suite("ConversationWindow")
struct ConversationWindowTests {
    // MARK: Order and identity

    @Test func appendsKeepSendOrder() async throws {
        let store = try ConversationWindow(conversationId: "c1")
        #expect(try await store.append(message("a", at: 1)) == .appended(index: 0))
        #expect(try await store.append(message("b", at: 2)) == .appended(index: 1))
        #expect(try await store.append(message("c", at: 3)) == .appended(index: 2))
        #expect(await store.messages.map(\.id) == ["a", "b", "c"])
    }

    @Test func outOfOrderMessageIsInsertedInPlace() async throws {
        let store = try ConversationWindow(conversationId: "c1")
        for (id, at) in [("a", 10), ("d", 40), ("c", 30)] { try await store.append(message(id, at: Int64(at))) }
        #expect(try await store.append(message("b", at: 20)) == .appended(index: 1))
        #expect(try await store.append(message("b2", at: 20)) == .appended(index: 2))   // tie: by id
        #expect(try await store.append(message("0", at: 5)) == .appended(index: 0))
        #expect(await store.messages.map(\.id) == ["0", "a", "b", "b2", "c", "d"])
        #expect(await store.message(id: "c")?.sentAtMs == 30)
    }

    @Test func duplicateIdsAreIgnored() async throws {
        let store = try ConversationWindow(conversationId: "c1")
        #expect(try await store.append(message("a", at: 1, text: "first")) == .appended(index: 0))
        #expect(try await store.append(message("a", at: 99, text: "again")) == .duplicate)
        #expect(await store.messages == [message("a", at: 1, text: "first")])
    }

    @Test func upsertInsertsReplacesAndMoves() async throws {
        let store = try ConversationWindow(conversationId: "c1")
        try await store.upsertByID(message("a", at: 1))
        try await store.upsertByID(message("b", at: 2))
        #expect(try await store.upsertByID(message("a", at: 1, text: "edited")) == [
            .updated(message("a", at: 1, text: "edited"), index: 0),
        ])
        #expect(try await store.upsertByID(message("a", at: 3, text: "moved")) == [     // send time changed
            .removed(messageId: "a", index: 0),
            .appended(message("a", at: 3, text: "moved"), index: 1),
        ])
        #expect(await store.messages.map(\.text) == ["text of b", "moved"])
    }

    @Test func wrongConversationIsRefusedAndChangesNothing() async throws {
        let store = try ConversationWindow(conversationId: "c1")
        await #expect(throws: ConversationWindowError.wrongConversation(expected: "c1", got: "c2")) {
            try await store.append(message("x", at: 1, in: "c2"))
        }
        #expect(await store.count == 0)
        #expect(throws: ConversationWindowError.invalidCap(0)) { try ConversationWindow(conversationId: "c", cap: 0) }
    }

    // MARK: History

    @Test func historyLoadsSortedDedupedAndCapped() async throws {
        let history = [message("c", at: 3), message("a", at: 1), message("d", at: 4),
                       message("b", at: 2), message("c", at: 3)]
        let store = try ConversationWindow(conversationId: "c1", cap: 3, history: history)
        #expect(await store.messages.map(\.id) == ["b", "c", "d"])
        #expect(await store.message(id: "a") == nil)
    }

    // MARK: Cap and clear

    @Test func capDropsTheOldest() async throws {
        let store = try ConversationWindow(conversationId: "c1", cap: 3)
        for i in 1...3 { try await store.append(message("m\(i)", at: Int64(i))) }
        // Full: the oldest leaves as the newest comes; the count stays 3.
        #expect(try await store.upsertByID(message("m4", at: 4)) == [.removed(messageId: "m1", index: 0),
                                                                     .appended(message("m4", at: 4), index: 2)])
        #expect(try await store.append(message("m5", at: 5)) == .appended(index: 2))
        #expect(await store.messages.map(\.id) == ["m3", "m4", "m5"])
        #expect(await store.count == 3)
        #expect(try await store.append(message("old", at: 0)) == .olderThanCap)
        #expect(await store.message(id: "m1") == nil)
    }

    /// The soak's second half grew by the dropped messages still held (docs/adr/0053): they
    /// must be let go soon after they leave the window, not once as many as the cap piled up.
    @Test func droppedMessagesAreLetGoSoon() throws {
        var timeline = try ConversationTimeline(conversationId: "c1", cap: 1_000)
        var mostHeld = 0
        for i in 0..<5_000 {
            _ = try timeline.append(message(String(format: "m%05d", i), at: Int64(i)))
            mostHeld = max(mostHeld, timeline.heldCount)
        }
        #expect(timeline.count == 1_000)
        #expect(mostHeld <= 1_000 + 1_000 / 8 + 32, "held \(mostHeld) messages for a window of 1,000")
    }

    @Test func longRunsPastTheCapStayConsistent() async throws {
        let store = try ConversationWindow(conversationId: "c1", cap: 10)
        for i in 0..<5_000 { try await store.append(message(String(format: "m%05d", i), at: Int64(i))) }
        #expect(await store.count == 10)
        #expect(await store.messages.first?.id == "m04990")
        #expect(await store.message(id: "m04995")?.sentAtMs == 4_995)
        #expect(await store.message(id: "m04989") == nil)
    }

    // MARK: Model check

    /// Random appends and upserts against a reference that re-sorts everything.
    @Test func matchesASortedReference() async throws {
        var timeline = try ConversationTimeline(conversationId: "c1", cap: 50)
        var reference: [String: TimelineMessage] = [:]
        var rng = SplitMix(seed: 7)
        for step in 0..<3_000 {
            let id = "m\(rng.next() % 120)"
            let candidate = message(id, at: Int64(rng.next() % 500), text: "v\(step)")
            if rng.next() % 2 == 0 {
                let (outcome, _) = try timeline.append(candidate)
                if outcome != .duplicate, outcome != .olderThanCap { reference[id] = candidate }
            } else {
                _ = try timeline.upsert(candidate)
                reference[id] = candidate
            }
            // The reference applies the cap the same way: keep the newest 50.
            let kept = reference.values.sorted { $0.sortKey < $1.sortKey }.suffix(50)
            reference = Dictionary(uniqueKeysWithValues: kept.map { ($0.id, $0) })
            #expect(Array(timeline.messages) == Array(kept))
            if Array(timeline.messages) != Array(kept) { break }
        }
    }
}
