/// Why a keystore operation failed. Never carries key bytes.
///
/// ```swift
/// do { _ = try keystore.identity(clientId: id) }
/// catch .missing { /* push for nobody here: unknown_client */ }
/// catch .unavailable(let why) { /* retry later: internal */ }
/// ```
public enum KeystoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such identity.
    case missing
    /// The master key cannot be read, or an I/O error: try again later.
    case unavailable(String)
    /// A file or directory has unsafe permissions, owner or type (symlink, not regular).
    case insecure(String)
    /// A file is truncated, oversize, tampered with, or not a keystore file.
    case corrupt(String)
    /// `save` of a clientId that already has a file.
    case duplicateClientId

    public var description: String {
        switch self {
        case .missing: return "keystore: no such identity"
        case .unavailable(let reason): return "keystore unavailable: \(reason)"
        case .insecure(let reason): return "keystore insecure: \(reason)"
        case .corrupt(let reason): return "keystore corrupt: \(reason)"
        case .duplicateClientId: return "keystore: clientId already exists"
        }
    }
}
