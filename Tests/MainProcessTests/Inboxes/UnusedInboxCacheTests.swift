import Foundation
import Synchronization
import Testing
@testable import MainProcess

/// Persists the slot as a JSON file in a directory, like the keystore will (minus encryption).
struct JSONFileIdentityVault: IdentityVault {
    let file: URL
    init(directory: URL) { file = directory.appendingPathComponent("unused-identity.json") }

    func loadUnusedIdentity() async throws -> PreparedIdentity? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        return try JSONDecoder().decode(PreparedIdentity.self, from: Data(contentsOf: file))
    }

    func storeUnusedIdentity(_ identity: PreparedIdentity?) async throws {
        if let identity {
            try JSONEncoder().encode(identity).write(to: file, options: .atomic)
        } else if FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.removeItem(at: file)
        }
    }
}

/// Generates distinct identities and counts how many it made.
final class CountingGenerator: Sendable {
    private let made = Mutex(0)
    let fails: Bool
    let prefix: String
    init(prefix: String = "inbox", fails: Bool = false) {
        self.prefix = prefix
        self.fails = fails
    }
    var count: Int { made.withLock { $0 } }

    struct Broken: Error {}

    func generate() throws -> PreparedIdentity {
        if fails { throw Broken() }
        let n = made.withLock { $0 += 1; return $0 }
        return PreparedIdentity(inboxId: "\(prefix)-\(n)", privateKey: [UInt8](repeating: UInt8(n), count: 32))
    }
}

struct FailingVault: IdentityVault {
    struct Down: Error {}
    func loadUnusedIdentity() async throws -> PreparedIdentity? { throw Down() }
    func storeUnusedIdentity(_ identity: PreparedIdentity?) async throws { throw Down() }
}

@Suite("UnusedInboxCache")
struct UnusedInboxCacheTests {
    @Test func consumeHitReturnsThePreparedIdentityAndRefills() async throws {
        let prepared = PreparedIdentity(inboxId: "ready", privateKey: [7, 7, 7])
        let vault = InMemoryIdentityVault(slot: prepared)
        let generator = CountingGenerator()
        let cache = UnusedInboxCache(vault: vault) { try generator.generate() }
        let identity = try await cache.consume()
        #expect(identity == prepared)
        try await cache.replenish()                       // joins the background refill
        #expect(generator.count == 1)
        #expect(await vault.loadUnusedIdentity()?.inboxId == "inbox-1")
        #expect(await cache.stats.hits == 1)
        #expect(await cache.stats.misses == 0)
    }

    @Test func consumeWhenEmptyCreatesOneOnTheSpot() async throws {
        let vault = InMemoryIdentityVault()
        let generator = CountingGenerator()
        let cache = UnusedInboxCache(vault: vault) { try generator.generate() }
        let first = try await cache.consume()
        #expect(first.inboxId == "inbox-1")
        #expect(await cache.stats.misses == 1)
        try await cache.replenish()
        let second = try await cache.consume()
        #expect(second.inboxId == "inbox-2")              // the background one, not a new one
        #expect(await cache.stats.hits == 1)
        #expect(first != second)
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
        #expect(await vault.loadUnusedIdentity()?.inboxId == "inbox-1")
    }

    @Test func preparedIdentitySurvivesARestart() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sotto-unused-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let before = CountingGenerator(prefix: "run1")
        let firstRun = UnusedInboxCache(vault: JSONFileIdentityVault(directory: directory)) { try before.generate() }
        try await firstRun.replenish()
        let prepared = try #require(try await JSONFileIdentityVault(directory: directory).loadUnusedIdentity())

        let after = CountingGenerator(prefix: "run2")
        let secondRun = UnusedInboxCache(vault: JSONFileIdentityVault(directory: directory)) { try after.generate() }
        #expect(try await secondRun.consume() == prepared)
        #expect(await secondRun.stats.hits == 1)
        try await secondRun.replenish()
        let next = try await JSONFileIdentityVault(directory: directory).loadUnusedIdentity()
        #expect(after.count == 1)                          // only the refill was generated
        #expect(next?.inboxId == "run2-1")
    }

    @Test func concurrentConsumersNeverShareAnIdentity() async throws {
        let generator = CountingGenerator()
        let cache = UnusedInboxCache(vault: InMemoryIdentityVault(slot: PreparedIdentity(inboxId: "ready", privateKey: [1])))
        { try generator.generate() }
        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await cache.consume().inboxId } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(ids).count == 20)
        #expect(ids.contains("ready"))
    }

    @Test func failuresAreTypedAndLeaveTheSlotAlone() async throws {
        let broken = UnusedInboxCache(vault: InMemoryIdentityVault()) { try CountingGenerator(fails: true).generate() }
        await #expect(throws: UnusedInboxError.generationFailed(errorType: "Broken")) { try await broken.consume() }

        let noVault = UnusedInboxCache(vault: FailingVault()) { try CountingGenerator().generate() }
        await #expect(throws: UnusedInboxError.vaultUnavailable(errorType: "Down")) { try await noVault.consume() }
    }

    @Test func descriptionRedactsTheKey() {
        let identity = PreparedIdentity(inboxId: "x", privateKey: [0xde, 0xad, 0xbe, 0xef])
        #expect(!"\(identity)".contains("222"))           // 0xde as a decimal byte
        #expect("\(identity)".contains("redacted"))
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
