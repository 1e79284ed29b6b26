/// The sizes a body sent by reference may have (docs/protocol/bodies.md §2–§3): its content
/// padded to whole 4,096-byte blocks, then to one of 9 size buckets, then sealed with a
/// 16-byte tag. What a push states of its body (`BodyHint`) is checked against these before
/// anything is read or fetched; `SealedBody` (SottoCrypto) seals and opens to them.
///
/// ```swift
/// BodySize.isValidLength(4_112)                     // true: one block and the tag
/// BodySize.paddedLength(contentCount: 5_000)        // 8_192
/// ```
public enum BodySize {
    public static let blockBytes = 4096
    /// The sizes a padded body may have, in blocks (docs/protocol/bodies.md §2): so that the
    /// relay learns one of 9 sizes of a body, not its length to 4 KiB (issue #19 goal 3).
    public static let bucketBlocks = [1, 2, 4, 8, 16, 32, 64, 128, 255]
    /// The largest content: a padded body of 255 blocks less the 4-byte length prefix. 255,
    /// not 256: a sealed body and its relay headers must fit nats-server's default
    /// `max_payload` of 1 MiB.
    public static let maxContentBytes = 1_044_476
    public static let maxPaddedBytes = 1_044_480
    /// The ChaCha20-Poly1305 tag a sealed body ends with.
    public static let tagBytes = 16
    public static let minSealedBytes = blockBytes + tagBytes
    public static let maxSealedBytes = maxPaddedBytes + tagBytes

    /// Whether `length` can be a sealed body's length (a size bucket's blocks plus the tag);
    /// says nothing of the bytes.
    public static func isValidLength(_ length: Int64) -> Bool {
        let padded = length - Int64(tagBytes)
        return padded > 0 && padded % Int64(blockBytes) == 0 && bucketBlocks.contains(Int(padded / Int64(blockBytes)))
    }

    /// The padded length for `contentCount` bytes of content: the 4-byte prefix and the
    /// content, rounded up to whole blocks, then up to the smallest size bucket that holds them.
    public static func paddedLength(contentCount: Int) -> Int {
        let blocks = (4 + contentCount + blockBytes - 1) / blockBytes
        return (bucketBlocks.first { $0 >= blocks } ?? blocks) * blockBytes
    }
}
