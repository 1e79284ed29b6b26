/// Why a sealed cell did not open. Carries no key material and no plaintext.
///
/// ```swift
/// do { _ = try key.open(cell, at: address) } catch .authenticationFailed { report(address) }
/// ```
public enum SealedCellError: Error, Sendable, Equatable {
    /// Shorter than a version byte, a nonce and a tag.
    case truncated
    /// A first byte this build does not know.
    case unknownVersion(UInt8)
    /// The wrong key (another conversation's, or a destroyed one), a cell moved from another
    /// row or column, or altered bytes.
    case authenticationFailed
}
