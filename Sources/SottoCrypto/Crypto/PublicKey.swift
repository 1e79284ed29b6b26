import CSecp256k1
import SottoWire

/// A secp256k1 public key in SEC1 compressed form (33 bytes). Parsing validates the point.
///
/// ```swift
/// let key = try PublicKey(compressed: Hex.decode(hex, count: 33)!)
/// key.hex            // "02…" (66 characters)
/// key.inboxId        // hex(SHA-256(compressed bytes)), PROTOCOL §1
/// ```
public struct PublicKey: Sendable, Equatable, Hashable {
    public static let byteCount = 33

    /// The compressed encoding.
    public let bytes: [UInt8]
    let raw: secp256k1_pubkey

    public init(compressed bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == Self.byteCount, bytes[0] == 0x02 || bytes[0] == 0x03 else {
            throw CryptoError.invalidPublicKey
        }
        var raw = secp256k1_pubkey()
        guard secp256k1_ec_pubkey_parse(Secp256k1.context.pointer, &raw, bytes, bytes.count) == 1 else {
            throw CryptoError.invalidPublicKey
        }
        self.bytes = bytes
        self.raw = raw
    }

    public init(hex: String) throws(CryptoError) {
        guard let bytes = Hex.decode(hex, count: Self.byteCount) else { throw CryptoError.invalidPublicKey }
        try self.init(compressed: bytes)
    }

    init(validated raw: secp256k1_pubkey) {
        var point = raw
        var out = [UInt8](repeating: 0, count: Self.byteCount)
        var length = out.count
        _ = secp256k1_ec_pubkey_serialize(
            Secp256k1.context.pointer, &out, &length, &point, UInt32(SECP256K1_EC_COMPRESSED))
        self.bytes = out
        self.raw = raw
    }

    public var hex: String { Hex.encode(bytes) }

    /// hex(SHA-256(compressed public key)): the inbox id of PROTOCOL §1.
    public var inboxId: String { Hex.encode(SHA256.hash(bytes)) }

    /// Verifies a compact `r || s` signature over a 32-byte digest. S is normalized first, so
    /// high-S signatures (valid ECDSA, but not what libsecp256k1 produces) are accepted.
    public func isValidSignature(_ signature: [UInt8], digest: [UInt8]) -> Bool {
        guard signature.count == 64, digest.count == 32 else { return false }
        let context = Secp256k1.context.pointer
        var parsed = secp256k1_ecdsa_signature()
        guard secp256k1_ecdsa_signature_parse_compact(context, &parsed, signature) == 1 else { return false }
        var normalized = secp256k1_ecdsa_signature()
        _ = secp256k1_ecdsa_signature_normalize(context, &normalized, &parsed)
        var point = raw
        return secp256k1_ecdsa_verify(context, &normalized, digest, &point) == 1
    }

    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.bytes == rhs.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
}
