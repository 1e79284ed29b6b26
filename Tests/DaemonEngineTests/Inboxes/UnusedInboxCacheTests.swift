@testable import DaemonCore
@testable import DaemonEngine
import Foundation
import SottoCrypto
import Synchronization
import Testing

/// Generates distinct identities and counts how many it made.
final class CountingGenerator: Sendable {
    private let made = Mutex(0)
    let fails: Bool
    let prefix: String
    init(prefix: String = "inbox", fails: Bool = false) {
        self.prefix = prefix
        self.fails = fails
    }
    private let ids = Mutex([String]())
    var count: Int { made.withLock { $0 } }
    /// The inboxIds generated so far, in order.
    var generated: [String] { ids.withLock { $0 } }

    struct Broken: Error {}

    func generate() throws -> Identity {
        if fails { throw Broken() }
        made.withLock { $0 += 1 }
        let identity = Identity.generate()
        ids.withLock { $0.append(identity.inboxId) }
        return identity
    }
}

struct FailingVault: IdentityVault {
    struct Down: Error {}
    func loadUnusedIdentity() async throws -> Identity? { throw Down() }
    func storeUnusedIdentity(_ identity: Identity?) async throws { throw Down() }
    func claimUnusedIdentity(_ identity: Identity) async throws { throw Down() }
    func storeIdentity(_ identity: Identity) async throws { throw Down() }
}

@Suite("UnusedInboxCache")
struct UnusedInboxCacheTests {
    @Test func consumeHitReturnsThePreparedIdentityAndRefills() async throws {
        let prepared = Identity.generate()
        let vault = InMemoryIdentityVault(slot: prepared)
        let generator = CountingGenerator()
        let cache = UnusedInboxCache(vault: vault) { try generator.generate() }
        let identity = try await cache.consume()
        #expect(identity.inboxId == prepared.inboxId)
        try await cache.replenish()                       // joins the background refill
        #expect(generator.count == 1)
        #expect(await vault.loadUnusedIdentity()?.inboxId == generator.generated[0])
        #expect(await cache.stats.hits == 1)
        #expect(await cache.stats.misses == 0)
    }

    @Test func consumeWhenEmptyCreatesOneOnTheSpot() async throws {
        let vault = InMemoryIdentityVault()
        let generator = CountingGenerator()
        let cache = UnusedInboxCache(vault: vault) { try generator.generate() }
        let first = try await cache.consume()
        #expect(first.inboxId == generator.generated[0])
        #expect(await vault.storedInboxIds == [first.inboxId])  // a miss is stored as a regular identity
        #expect(await cache.stats.misses == 1)
        try await cache.replenish()
        let second = try await cache.consume()
        #expect(second.inboxId == generator.generated[1])  // the background one, not a new one
        #expect(await cache.stats.hits == 1)
        #expect(first.inboxId != second.inboxId)
    }

    @Test func replenishFillsAnEmptySlotOnceOnly() async throws {
        let vault = InMemoryIdentityVault()
        let generator = CountingGenerator()
        let cache = UnusedInboxCache(vault: vault) { try generator.generate() }
        #expect(try await cache.hasPreparedIdentity() == false)
        try await cache.replenish()
        try await cache.replenish()
        #expect(generator.count == 1)
        #expect(try await cache.hasPreparedIdentity())
        #expect(await vault.loadUnusedIdentity()?.inboxId == generator.generated[0])
    }

    @Test func preparedIdentitySurvivesARestartInTheKeystore() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sotto-unused-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        func vault() throws -> KeystoreIdentityVault {
            KeystoreIdentityVault(keystore: try Keystore(directory: directory.path, environment: [:], createIfMissing: true))
        }

        let before = CountingGenerator()
        let firstRun = UnusedInboxCache(vault: try vault()) { try before.generate() }
        try await firstRun.replenish()
        let prepared = try #require(try await vault().loadUnusedIdentity())

        let after = CountingGenerator()
        let secondRun = UnusedInboxCache(vault: try vault()) { try after.generate() }
        let consumed = try await secondRun.consume()
        #expect(consumed.inboxId == prepared.inboxId)
        #expect(consumed.clientId == prepared.clientId)
        // Claimed, not copied: a regular identity now, found by clientId and by inboxId.
        let keystore = try Keystore(directory: directory.path, environment: [:])
        #expect(try keystore.identity(clientId: consumed.clientId).inboxId == consumed.inboxId)
        #expect(try keystore.identity(inboxId: consumed.inboxId).clientId == consumed.clientId)
        #expect(await secondRun.stats.hits == 1)
        try await secondRun.replenish()
        let next = try await vault().loadUnusedIdentity()
        #expect(after.count == 1)                          // only the refill was generated
        #expect(next?.inboxId == after.generated[0])
    }

    @Test func concurrentConsumersNeverShareAnIdentity() async throws {
        let generator = CountingGenerator()
        let ready = Identity.generate()
        let cache = UnusedInboxCache(vault: InMemoryIdentityVault(slot: ready)) { try generator.generate() }
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await cache.consume().inboxId } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(ids).count == 20)
        #expect(ids.contains(ready.inboxId))
    }

    @Test func failuresAreTypedAndLeaveTheSlotAlone() async throws {
        let broken = UnusedInboxCache(vault: InMemoryIdentityVault()) { try CountingGenerator(fails: true).generate() }
        await #expect(throws: UnusedInboxError.generationFailed(errorType: "Broken")) { try await broken.consume() }

        let noVault = UnusedInboxCache(vault: FailingVault()) { try CountingGenerator().generate() }
        await #expect(throws: UnusedInboxError.vaultUnavailable(errorType: "Down")) { try await noVault.consume() }
    }
}

@Suite("UnusedInboxCache refill")
struct UnusedInboxCacheRefillTests {
    /// Consume, wait for the refill, consume again: every consume after the first refill hits.
    @Test func everyConsumeAfterARefillHits() async throws {
        let generator = CountingGenerator()
        let cache = UnusedInboxCache(vault: InMemoryIdentityVault()) { try generator.generate() }
        for _ in 0..<50 {
            try await cache.replenish()
            _ = try await cache.consume()
        }
        #expect(await cache.stats.hits == 50)
        #expect(await cache.stats.misses == 0)
    }
}
