import ControlProtocol
import CSecretService
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// The user's Secret Service (`org.freedesktop.secrets`: GNOME Keyring, KWallet, KeePassXC)
/// through libsecret, where the daemon keeps the keystore's master key (docs/adr/0045): one
/// item with attributes `application=sotto`, `group=<group directory>`, its secret the key
/// as 64 lowercase hex characters. Every call gives up after `timeoutMs`.
///
/// ```swift
/// let service = SecretService(group: "/home/me/.local/share/sotto")
/// if case .found(let key) = service.lookup() { … }
/// ```
struct SecretService: Sendable {
    /// What a lookup found. Never carries key bytes in its text.
    enum Lookup: Sendable {
        case found(SecretBytes)
        case notFound
        /// The collection holding it is locked: wait for the user to unlock it.
        case locked(String)
        /// No Secret Service answered (none on the bus, or it did not reply in time).
        case unreachable(String)
        /// No entry, and no default collection to store one in (GNOME Keyring before the
        /// first desktop login): wait for the user to make one.
        case noDefaultCollection
        /// The entry is there but is not a 32-byte key: nothing is changed.
        case garbage(String)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// The state the user can end that this failure is (`.locked`, `.unreachable`,
        /// `.noDefaultCollection`: wait and try again), or nil for one no wait fixes.
        var state: Lookup?
    }

    /// What a user reads when there is no default collection: the fixes in the words of a
    /// desktop (never the D-Bus path GNOME Keyring's own error names).
    static let noDefaultCollectionAdvice = KeyringWaitNote.noDefaultKeyring + " yet (GNOME Keyring makes its "
        + "login keyring at your first desktop login); log in to a desktop session once, or create a keyring in "
        + "Passwords and Keys (Seahorse) and set it as the default, or keep the key elsewhere: "
        + "sotto install --user --key-store file (or --key-store credential, docs/adr/0054)"

    let group: String
    var timeoutMs: Int32 = 5_000

    func lookup() -> Lookup {
        var secret: UnsafeMutablePointer<UInt8>?
        var length = 0
        var error: UnsafeMutablePointer<CChar>?
        let code = group.withCString { sotto_secret_lookup($0, timeoutMs, &secret, &length, &error) }
        let reason = Self.take(error)
        switch Int(code) {
        case Int(SOTTO_SECRET_FOUND):
            guard let secret else { return .unreachable("the Secret Service returned no value") }
            var bytes = Array(UnsafeBufferPointer(start: secret, count: length))
            memset(secret, 0, length)
            free(secret)
            defer { SecretBytes.zero(&bytes) }
            if bytes.last == 0x0a { bytes.removeLast() }
            guard bytes.count == 64, let key = Hex.decode(String(decoding: bytes, as: UTF8.self), count: 32) else {
                return .garbage("the Secret Service entry for \(group) (application=sotto) holds \(bytes.count) bytes, "
                    + "not a 32-byte key in 64 hex characters; nothing was changed. Remove it (secret-tool clear "
                    + "application sotto group \(group)) and import your recovery key (sotto key import)")
            }
            var decoded = key
            defer { SecretBytes.zero(&decoded) }
            return .found(SecretBytes(decoded))
        case Int(SOTTO_SECRET_NOT_FOUND): return .notFound
        case Int(SOTTO_SECRET_LOCKED): return .locked(reason ?? "the keyring is locked")
        case Int(SOTTO_SECRET_UNREACHABLE): return .unreachable(reason ?? "no Secret Service")
        case Int(SOTTO_SECRET_NO_DEFAULT_COLLECTION): return .noDefaultCollection
        default: return .unreachable(reason ?? "the Secret Service failed")
        }
    }

    func store(_ key: SecretBytes) throws(Failure) {
        var hex = Array(Hex.encode(key.copyBytes()).utf8) + [0]
        defer { SecretBytes.zero(&hex) }
        var error: UnsafeMutablePointer<CChar>?
        let code = hex.withUnsafeBufferPointer { text in
            group.withCString { groupText in
                text.withMemoryRebound(to: CChar.self) {
                    sotto_secret_store(groupText, "Sotto master key (\(group))", $0.baseAddress, timeoutMs, &error)
                }
            }
        }
        let reason = Self.take(error)
        guard code == SOTTO_SECRET_FOUND else { throw Self.failure(code, reason ?? "cannot store the key") }
    }

    /// Deletes the entry; true when there was one.
    @discardableResult
    func clear() throws(Failure) -> Bool {
        var error: UnsafeMutablePointer<CChar>?
        let code = group.withCString { sotto_secret_clear($0, timeoutMs, &error) }
        let reason = Self.take(error)
        switch code {
        case SOTTO_SECRET_FOUND: return true
        case SOTTO_SECRET_NOT_FOUND: return false
        default: throw Self.failure(code, reason ?? "cannot delete the key")
        }
    }

    /// A shim code other than FOUND as a failure, with the state it amounts to.
    private static func failure(_ code: Int32, _ reason: String) -> Failure {
        switch code {
        case SOTTO_SECRET_NO_DEFAULT_COLLECTION: return Failure(description: noDefaultCollectionAdvice, state: .noDefaultCollection)
        case SOTTO_SECRET_LOCKED: return Failure(description: reason, state: .locked(reason))
        // The service went away or did not answer in time (a keyring daemon restarting).
        case SOTTO_SECRET_UNREACHABLE: return Failure(description: reason, state: .unreachable(reason))
        default: return Failure(description: reason, state: nil)
        }
    }

    private static func take(_ error: UnsafeMutablePointer<CChar>?) -> String? {
        guard let error else { return nil }
        defer { free(error) }
        return String(cString: error)
    }
}
