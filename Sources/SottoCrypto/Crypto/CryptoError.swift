/// Failures of the crypto primitives. Carries no key material.
///
/// ```swift
/// do { _ = try PublicKey(compressed: bytes) } catch CryptoError.invalidPublicKey { … }
/// ```
public enum CryptoError: Error, Sendable, Equatable {
    case invalidPrivateKey
    case invalidPublicKey
    case invalidSignature
    case invalidLength
    case authenticationFailed
}
