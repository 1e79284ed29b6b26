/// The sizes of a stored attachment (docs/protocol/attachments.md §2 and §4): the header, the
/// 64 KiB chunks, the padding bucket of a file and the stored length that follows from it. No
/// crypto: what a reference is checked against and what a transport may know of a file.
///
/// ```swift
/// AttachmentLayout.paddedSize(1_048_577)      // 1,114,112: rounded up to 64 KiB
/// AttachmentLayout.storedLength(1_048_577)    // 8 + 1,114,112 + 17 × 16 = 1,114,392
/// ```
public enum AttachmentLayout {
    // MARK: Constants

    /// The largest file: 100 MiB, Signal's send limit (issue #35).
    public static let maxSize = 104_857_600
    /// Plaintext bytes per chunk; every chunk but the last holds exactly this many.
    public static let chunkSize = 65_536
    /// The Poly1305 tag after each chunk's ciphertext.
    public static let tagSize = 16
    /// The smallest padded size, and the granularity below 128 KiB.
    public static let minPaddedSize = 4096
    /// `"SOTA"`, version 1, chunk size 2^16, two reserved zero bytes: the only header version 1 has.
    public static let header: [UInt8] = [0x53, 0x4F, 0x54, 0x41, 0x01, 0x10, 0x00, 0x00]
    /// The padding keeps this many significant bits of a size (at most 2^-5 ≈ 6.25 % added
    /// above 64 KiB): docs/adr/0073.
    static let keptBits = 5

    // MARK: Sizes of one file

    /// The plaintext padded to its bucket: `max(4096, ceil(n / s) × s)`, `s = 2^max(12, bitLength(n) − 5)`.
    public static func paddedSize(_ size: Int) -> Int {
        precondition(size >= 0, "a size is not negative")
        let bitLength = Int.bitWidth - size.leadingZeroBitCount
        let step = 1 << max(12, bitLength - keptBits)
        return max(minPaddedSize, (size + step - 1) / step * step)
    }

    /// The chunks a file of `size` bytes is stored in.
    public static func chunkCount(_ size: Int) -> Int {
        (paddedSize(size) + chunkSize - 1) / chunkSize
    }

    /// Bytes stored for a file of `size` bytes: the header, the padded plaintext and a tag per chunk.
    public static func storedLength(_ size: Int) -> Int {
        header.count + paddedSize(size) + tagSize * chunkCount(size)
    }

    /// The plaintext bytes (file and padding) in chunk `index` of a file of `size` bytes.
    public static func chunkPlaintextSize(_ index: Int, size: Int) -> Int {
        min(chunkSize, paddedSize(size) - index * chunkSize)
    }
}
