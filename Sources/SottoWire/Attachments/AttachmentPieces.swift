/// A stored attachment file `S` cut into *pieces* (docs/protocol/attachment-relay.md §2): piece
/// `i` is exactly chunk `i` of `S` as stored, and piece 0 also carries the 8-byte header, so
/// each piece is checked on its own as it arrives. Every transport moves `S` as these pieces,
/// and resumes at the first one not yet whole: a relay keeps one message per piece, a direct
/// endpoint streams them in order (docs/protocol/attachment-direct.md).
///
/// ```swift
/// AttachmentPieces.count(storedLength: 104_883_208)       // 1,600
/// AttachmentPieces.range(0, storedLength: 4_120)          // 0..<4120: header and chunk 0
/// AttachmentPieces.wholePieces(in: 70_000, storedLength: 200_000)   // 1: piece 0 ends at 65,560
/// ```
public enum AttachmentPieces {
    /// A 100 MiB file's chunks.
    public static let maxPieces = AttachmentLayout.chunkCount(AttachmentLayout.maxSize)

    /// Pieces of a stored file of `storedLength` bytes: its chunk count. Nil for a length no
    /// file of 0 … 100 MiB is stored as.
    public static func count(storedLength: Int) -> Int? {
        guard let size = fileSize(storedLength: storedLength) else { return nil }
        return AttachmentLayout.chunkCount(size)
    }

    /// Where piece `index` lies in `S`: piece 0 is the header and chunk 0, piece `i > 0` is
    /// chunk `i` (`8 + 65,552 × i` on, its stored length).
    public static func range(_ index: Int, storedLength: Int) -> Range<Int> {
        let chunkStride = AttachmentLayout.chunkSize + AttachmentLayout.tagSize
        let header = AttachmentLayout.header.count
        let start = index == 0 ? 0 : header + chunkStride * index
        let end = min(storedLength, header + chunkStride * (index + 1))
        return start..<end
    }

    /// How many pieces, from the first, lie entirely in the first `bytes` bytes of `S`.
    public static func wholePieces(in bytes: Int, storedLength: Int) -> Int {
        guard let pieces = count(storedLength: storedLength) else { return 0 }
        var whole = 0
        while whole < pieces, range(whole, storedLength: storedLength).upperBound <= bytes { whole += 1 }
        return whole
    }

    /// The file size whose stored length is `storedLength` (the smallest, since a padded size
    /// stands for many file sizes): what the length alone says. Nil when no size fits.
    public static func fileSize(storedLength: Int) -> Int? {
        let header = AttachmentLayout.header.count
        let stride = AttachmentLayout.chunkSize + AttachmentLayout.tagSize
        guard storedLength > header, storedLength <= AttachmentLayout.storedLength(AttachmentLayout.maxSize) else { return nil }
        let chunks = (storedLength - header + stride - 1) / stride
        let padded = storedLength - header - AttachmentLayout.tagSize * chunks
        guard padded > 0, padded <= AttachmentLayout.maxSize, AttachmentLayout.paddedSize(padded) == padded,
              AttachmentLayout.storedLength(padded) == storedLength else { return nil }
        return padded
    }
}
