/// What the daemon finds when it opens every sealed identity once at start-up: how many open,
/// and which do not (by clientId, with the reason), so one damaged file is isolated and
/// reported instead of stopping the daemon, and a master key that opens none of them is
/// named as the wrong key (docs/adr/0019).
///
/// ```swift
/// let audit = try keystore.audit()
/// if audit.masterKeyMismatch { /* refuse to start: restore the original master key */ }
/// for damaged in audit.damaged { log("identity \(damaged.clientId): \(damaged.reason)") }
/// ```
public struct KeystoreAudit: Sendable, Equatable {
    public struct Damaged: Sendable, Equatable {
        public let clientId: String
        public let reason: String
        /// The file is a well-formed record whose authentication failed (tampered, or sealed
        /// under another master key), rather than truncated or not a record at all.
        public let failedAuthentication: Bool
    }

    public let openable: Int
    public let damaged: [Damaged]

    /// Every identity is well formed and none opens: the master key is not the one that sealed them.
    public var masterKeyMismatch: Bool {
        openable == 0 && !damaged.isEmpty && damaged.allSatisfy(\.failedAuthentication)
    }
}

extension Keystore {
    /// Opens every `<clientId>.identity` once (one read and one AEAD open each; ~20 µs).
    public func audit() throws(KeystoreError) -> KeystoreAudit {
        var openable = 0
        var damaged: [KeystoreAudit.Damaged] = []
        for clientId in try identityClientIds() {
            do {
                _ = try identity(clientId: clientId)
                openable += 1
            } catch .missing {
                continue  // deleted while auditing
            } catch {
                var authentication = false
                if case .corrupt(let reason) = error { authentication = reason.contains("failed authentication") }
                damaged.append(.init(clientId: clientId, reason: error.description, failedAuthentication: authentication))
            }
        }
        return KeystoreAudit(openable: openable, damaged: damaged)
    }
}
