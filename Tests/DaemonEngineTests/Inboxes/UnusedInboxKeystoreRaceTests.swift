@testable import DaemonCore
@testable import DaemonEngine
import Foundation
import SottoCrypto
import Testing
import TestSupport

/// Creating conversations six at a time (the relay linkability check does) runs a claim of
/// the unused slot beside the refill that writes the next identity into it. The keystore's
/// slot operations are plain file calls on whichever thread runs them, so without a lock a
/// refill's rename could land between a claim's read and its move: the claimed clientId's
/// file would then hold the *next* identity (its conversation unreadable for good), or the
/// claim would fail the user's `sotto new`.
@Suite("Unused inbox on the real keystore, consumed concurrently")
struct UnusedInboxKeystoreRaceTests {
    @Test("60 concurrent consumes, refills running beside them: each succeeds with its own identity, and the keystore file under each clientId opens as that identity")
    func concurrentConsumesKeepEachIdentityWhole() async throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let keystore = try Keystore(directory: temp.path + "/keystore", environment: [:], createIfMissing: true)
        let cache = UnusedInboxCache(vault: KeystoreIdentityVault(keystore: keystore)) { Identity.generate() }
        try await cache.replenish()
        var consumed: [Identity] = []
        for _ in 0..<10 {
            let wave = try await withThrowingTaskGroup(of: Identity.self) { group in
                for _ in 0..<6 { group.addTask { try await cache.consume() } }
                return try await group.reduce(into: [Identity]()) { $0.append($1) }
            }
            consumed += wave
        }
        #expect(Set(consumed.map(\.clientId)).count == consumed.count, "an identity was handed out twice")
        var wrong: [String] = []
        for identity in consumed {
            do {
                let stored = try keystore.identity(clientId: identity.clientId)
                if !stored.isSame(as: identity) { wrong.append("\(identity.clientId.prefix(8)): another identity") }
            } catch {
                wrong.append("\(identity.clientId.prefix(8)): \(error)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(consumed.count) claimed identities are not whole in the keystore: \(wrong.prefix(3))")
        let hits = await cache.stats.hits
        print("UNUSED inbox race: consumes=\(consumed.count) hits=\(hits) misses=\(await cache.stats.misses) wrong=\(wrong.count)")
        #expect(hits > 0, "no consume took the prepared identity: the race was never run")
    }
}
