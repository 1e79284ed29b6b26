import DaemonLogging
import Foundation
import SottoCrypto

/// The daemon's start-up look at the keystore (docs/adr/0019): a master key that opens none
/// of the sealed identities stops the start with the remedy (a new key would make every
/// conversation unreadable); an identity that does not open is logged by clientId and
/// returned, so the daemon isolates it and serves the rest.
///
/// ```swift
/// let damaged = try KeystoreCheck.run(keystore, environment: env)   // [] when all open
/// ```
enum KeystoreCheck {
    struct WrongMasterKey: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ keystore: Keystore, environment: [String: String]) throws -> [KeystoreAudit.Damaged] {
        let audit = try keystore.audit()
        if audit.masterKeyMismatch {
            let source = environment["CREDENTIALS_DIRECTORY"].map { "the credential \($0)/\(Keystore.credentialName)" }
                ?? "\(keystore.directory)/master.key"
            throw WrongMasterKey(description: "the keystore master key (\(source)) opens none of the \(audit.damaged.count) "
                + "sealed identities in \(keystore.directory): it is not the key that sealed them. Restore the original "
                + "master key from your backup of the group directory, then start sotto again; sotto never replaces it")
        }
        for damaged in audit.damaged {
            DaemonLog.error("identity clientId \(damaged.clientId) cannot be opened (\(damaged.reason)); its conversations "
                + "are unavailable and its pushes are refused with a retryable error until \(keystore.directory)/"
                + "\(damaged.clientId).identity is restored from a backup; every other conversation is served")
        }
        return audit.damaged
    }
}
