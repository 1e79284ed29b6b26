import Testing
@testable import SottoDaemon

@Suite("Conversation subscriptions")
struct ConversationSubscriptionTests {
    @Test func subscriberOfOneConversationSeesNothingFromAnother() async throws {
        let registry = ConversationStoreRegistry()
        let storeA = try await registry.open("A")
        let storeB = try await registry.open("B")
        let subscription = await storeA.subscribe()
        for i in 0..<100 { try await storeB.append(message("b\(i)", at: Int64(i), in: "B")) }
        await storeB.markAllRead()
        await storeB.clear()
        try await storeA.append(message("a0", at: 1, in: "A"))
        // The first change A's subscriber sees is A's own write: B's 100+ writes never arrived.
        let changes = await collect(1, from: subscription.changes)
        #expect(changes == [.appended(message("a0", at: 1, in: "A"), index: 0)])
    }

    @Test func eventsArriveInWriteOrder() async throws {
        let store = try ConversationStore(conversationId: "c1")
        let subscription = await store.subscribe()
        var expected: [ConversationChange] = []
        for i in 0..<200 {
            let m = message("m\(i)", at: Int64(i), outgoing: true)
            try await store.append(m)
            expected.append(.appended(m, index: i))
            await store.setDeliveryStatus(m.id, .sent)
            var sent = m
            sent.deliveryStatus = .sent
            expected.append(.updated(sent, index: i))
        }
        #expect(await collect(expected.count, from: subscription.changes) == expected)
    }

    @Test func subscriptionStartsWithASnapshot() async throws {
        let store = try ConversationStore(conversationId: "c1", history: [message("h", at: 1)])
        let subscription = await store.subscribe()
        #expect(subscription.messages.map(\.id) == ["h"])
        #expect(subscription.unreadCount == 1)
    }

    @Test func registryCreatesOnWakeAndDropsOnSleep() async throws {
        let registry = ConversationStoreRegistry(cap: 5)
        let store = try await registry.open("c1", history: [message("h", at: 1)])
        #expect(try await registry.open("c1") === store)
        #expect(await registry.openConversationIds == ["c1"])
        let subscription = await store.subscribe()
        #expect(await registry.drop("c1"))
        var received = 0
        for await _ in subscription.changes { received += 1 }           // ends: the stream finished
        #expect(received == 0)
        #expect(await registry.store(for: "c1") == nil)
        #expect(await registry.drop("c1") == false)
        #expect(await store.subscribe().messages.count == 1)            // a late subscriber gets an ended stream
    }

    @Test func endedSubscriberIsForgotten() async throws {
        let store = try ConversationStore(conversationId: "c1")
        do {
            let subscription = await store.subscribe()
            #expect(await store.subscriberCount == 1)
            let iterate = Task { for await _ in subscription.changes { break } }
            try await store.append(message("a", at: 1))
            await iterate.value
        }
        // onTermination hops back to the actor; wait for that hop without sleeping.
        while await store.subscriberCount != 0 { await Task.yield() }
        #expect(await store.subscriberCount == 0)
    }
}
