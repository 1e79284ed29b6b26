import CSodium

/// libsodium must be initialised once per process before use; a global `let` is
/// initialised exactly once, thread-safely, on first access.
///
/// ```swift
/// Sodium.ensureInitialized()   // cheap after the first call
/// ```
public enum Sodium {
    private static let initialized: Bool = sodium_init() >= 0

    public static func ensureInitialized() {
        precondition(initialized, "libsodium failed to initialise")
    }
}
