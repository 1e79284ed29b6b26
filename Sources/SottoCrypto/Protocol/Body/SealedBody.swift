import SottoWire

/// A content too large for one push, padded and encrypted once with a key of its own
/// (docs/protocol/bodies.md §3): what every member's device fetches beside its push.
///
/// ```swift
/// let body = SealedBody.seal(Array(longText.utf8))          // fresh id and key
/// body.sealed.count                                         // 4096·b + 16, b a size bucket (BodySize)
/// let content = try SealedBody.open(body.sealed, id: body.id, key: body.key)
/// ```
public struct SealedBody: Sendable, Equatable {
    static let aadLabel = Array("sotto/body/v1".utf8)

    /// 16 random bytes.
    public let id: [UInt8]
    /// 32 random bytes, used for this one body only.
    public let key: [UInt8]
    /// ciphertext || tag: what the relay stores and a direct sender writes after the push.
    public let sealed: [UInt8]

    /// Seals `content` (1 … `BodySize.maxContentBytes` bytes: the caller checks) with a fresh id and key.
    public static func seal(_ content: [UInt8], id: [UInt8] = SecureRandom.bytes(16),
                            key: [UInt8] = SecureRandom.bytes(32)) -> SealedBody {
        precondition(!content.isEmpty && content.count <= BodySize.maxContentBytes, "body content size out of range")
        var padded = [UInt8](repeating: 0, count: BodySize.paddedLength(contentCount: content.count))
        let count = UInt32(content.count)
        padded[0] = UInt8(count >> 24)
        padded[1] = UInt8((count >> 16) & 0xff)
        padded[2] = UInt8((count >> 8) & 0xff)
        padded[3] = UInt8(count & 0xff)
        padded.replaceSubrange(4..<(4 + content.count), with: content)
        // A fresh random key used once: the all-zero nonce cannot repeat under it.
        let sealed = try! ChaCha20Poly1305.seal(padded, key: key, nonce: zeroNonce, aad: aad(id: id))
        return SealedBody(id: id, key: key, sealed: sealed)
    }

    /// The content of a sealed body, or `body_mismatch` when the key, the id or the padding
    /// is not the one a sender following §3 made.
    public static func open(_ sealed: [UInt8], id: [UInt8], key: [UInt8]) throws(PushError) -> [UInt8] {
        guard BodySize.isValidLength(Int64(sealed.count)) else {
            throw PushError(.bodyMismatch, "body length \(sealed.count) is not a sealed body's")
        }
        let padded: [UInt8]
        do {
            padded = try ChaCha20Poly1305.open(sealed, key: key, nonce: zeroNonce, aad: aad(id: id))
        } catch {
            throw PushError(.bodyMismatch, "the body does not open with its reference's key")
        }
        let count = Int(padded[0]) << 24 | Int(padded[1]) << 16 | Int(padded[2]) << 8 | Int(padded[3])
        guard count >= 1, count <= padded.count - 4, BodySize.paddedLength(contentCount: count) == padded.count else {
            throw PushError(.bodyMismatch, "the body's padding is not minimal")
        }
        guard padded[(4 + count)...].allSatisfy({ $0 == 0 }) else {
            throw PushError(.bodyMismatch, "the body's padding is not zero bytes")
        }
        return Array(padded[4..<(4 + count)])
    }

    private static let zeroNonce = [UInt8](repeating: 0, count: ChaCha20Poly1305.nonceByteCount)

    private static func aad(id: [UInt8]) -> [UInt8] { aadLabel + id }
}
