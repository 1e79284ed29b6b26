import SottoWire

/// A content too large for one push, padded and encrypted once with a key of its own
/// (docs/protocol/bodies.md §3): what every member's device fetches beside its push.
///
/// ```swift
/// let body = SealedBody.seal(Array(longText.utf8))          // fresh id and key
/// body.sealed.count                                         // 4096·b + 16, b a size bucket
/// let content = try SealedBody.open(body.sealed, id: body.id, key: body.key)
/// ```
public struct SealedBody: Sendable, Equatable {
    public static let blockBytes = 4096
    /// The sizes a padded body may have, in blocks (docs/protocol/bodies.md §2): so that the
    /// relay learns one of 9 sizes of a body, not its length to 4 KiB (issue #19 goal 3).
    public static let bucketBlocks = [1, 2, 4, 8, 16, 32, 64, 128, 255]
    /// The largest content: a padded body of 255 blocks less the 4-byte length prefix. 255,
    /// not 256: a sealed body and its relay headers must fit nats-server's default
    /// `max_payload` of 1 MiB.
    public static let maxContentBytes = 1_044_476
    public static let maxPaddedBytes = 1_044_480
    public static let minSealedBytes = blockBytes + ChaCha20Poly1305.tagByteCount
    public static let maxSealedBytes = maxPaddedBytes + ChaCha20Poly1305.tagByteCount
    static let aadLabel = Array("sotto/body/v1".utf8)

    /// 16 random bytes.
    public let id: [UInt8]
    /// 32 random bytes, used for this one body only.
    public let key: [UInt8]
    /// ciphertext || tag: what the relay stores and a direct sender writes after the push.
    public let sealed: [UInt8]

    /// Whether `length` can be a sealed body's length (a size bucket's blocks plus the tag);
    /// says nothing of the bytes.
    public static func isValidLength(_ length: Int64) -> Bool {
        let padded = length - Int64(ChaCha20Poly1305.tagByteCount)
        return padded > 0 && padded % Int64(blockBytes) == 0 && bucketBlocks.contains(Int(padded / Int64(blockBytes)))
    }

    /// The padded length for `contentCount` bytes of content: the 4-byte prefix and the
    /// content, rounded up to whole blocks, then up to the smallest size bucket that holds them.
    public static func paddedLength(contentCount: Int) -> Int {
        let blocks = (4 + contentCount + blockBytes - 1) / blockBytes
        return (bucketBlocks.first { $0 >= blocks } ?? blocks) * blockBytes
    }

    /// Seals `content` (1 … `maxContentBytes` bytes: the caller checks) with a fresh id and key.
    public static func seal(_ content: [UInt8], id: [UInt8] = SecureRandom.bytes(16),
                            key: [UInt8] = SecureRandom.bytes(32)) -> SealedBody {
        precondition(!content.isEmpty && content.count <= maxContentBytes, "body content size out of range")
        var padded = [UInt8](repeating: 0, count: paddedLength(contentCount: content.count))
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
        guard isValidLength(Int64(sealed.count)) else {
            throw PushError(.bodyMismatch, "body length \(sealed.count) is not a sealed body's")
        }
        let padded: [UInt8]
        do {
            padded = try ChaCha20Poly1305.open(sealed, key: key, nonce: zeroNonce, aad: aad(id: id))
        } catch {
            throw PushError(.bodyMismatch, "the body does not open with its reference's key")
        }
        let count = Int(padded[0]) << 24 | Int(padded[1]) << 16 | Int(padded[2]) << 8 | Int(padded[3])
        guard count >= 1, count <= padded.count - 4, paddedLength(contentCount: count) == padded.count else {
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
