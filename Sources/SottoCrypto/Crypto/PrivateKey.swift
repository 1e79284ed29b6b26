import CSecp256k1

/// A secp256k1 private key (32 bytes), held in zeroed-on-release memory.
///
/// ```swift
/// let key = PrivateKey.generate()
/// let signature = key.sign(digest: SHA256.hash(Array("hi".utf8)))   // 64 bytes r||s, low-S
/// key.publicKey.isValidSignature(signature, digest: SHA256.hash(Array("hi".utf8)))   // true
/// ```
public struct PrivateKey: Sendable {
    public static let byteCount = 32

    let secret: SecretBytes
    /// The compressed public key, derived once.
    public let publicKey: PublicKey

    /// Validates `bytes` with `secp256k1_ec_seckey_verify` (non-zero, below the group order).
    public init(bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == Self.byteCount else { throw CryptoError.invalidPrivateKey }
        let context = Secp256k1.context.pointer
        guard secp256k1_ec_seckey_verify(context, bytes) == 1 else { throw CryptoError.invalidPrivateKey }
        var raw = secp256k1_pubkey()
        guard secp256k1_ec_pubkey_create(context, &raw, bytes) == 1 else { throw CryptoError.invalidPrivateKey }
        secret = SecretBytes(bytes)
        publicKey = PublicKey(validated: raw)
    }

    /// A fresh key from the kernel CSPRNG, retried in the (astronomically rare) invalid case.
    public static func generate() -> PrivateKey {
        while true {
            var candidate = SecureRandom.bytes(byteCount)
            defer { SecretBytes.zero(&candidate) }
            if let key = try? PrivateKey(bytes: candidate) { return key }
        }
    }

    /// A copy of the 32 key bytes, for the keystore. The caller owns zeroing it.
    public func exportBytes() -> [UInt8] { secret.copyBytes() }

    // MARK: - Operations

    /// ECDSA over a 32-byte digest: compact `r || s`, deterministic (RFC 6979), low-S.
    public func sign(digest: [UInt8]) -> [UInt8] {
        precondition(digest.count == 32, "ECDSA signs a 32-byte digest")
        let context = Secp256k1.context.pointer
        var signature = secp256k1_ecdsa_signature()
        let signed = secret.withUnsafeBytes { key in
            secp256k1_ecdsa_sign(context, &signature, digest, key.bindMemory(to: UInt8.self).baseAddress!, nil, nil)
        }
        // Only fails for an invalid key, which `init` excluded.
        precondition(signed == 1, "secp256k1_ecdsa_sign failed")
        var out = [UInt8](repeating: 0, count: 64)
        _ = secp256k1_ecdsa_signature_serialize_compact(context, &out, &signature)
        return out
    }

    /// The raw 32-byte X coordinate of `self · peer` (PROTOCOL §3: not hashed).
    public func sharedSecretX(with peer: PublicKey) throws(CryptoError) -> [UInt8] {
        let context = Secp256k1.context.pointer
        var point = peer.raw
        var out = [UInt8](repeating: 0, count: 32)
        let result = secret.withUnsafeBytes { key in
            secp256k1_ecdh(context, &out, &point, key.bindMemory(to: UInt8.self).baseAddress!, { output, x32, _, _ in
                guard let output, let x32 else { return 0 }
                output.update(from: x32, count: 32)
                return 1
            }, nil)
        }
        guard result == 1 else { throw CryptoError.invalidPublicKey }
        return out
    }
}
