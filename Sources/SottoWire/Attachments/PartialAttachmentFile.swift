import Glibc

/// A stored attachment file `S` being received into a partial file, piece by piece, from any
/// source of pieces (a relay, another device's endpoint): the whole pieces it already holds
/// are read back and checked, a torn piece at its end is cut off, then each missing piece is
/// asked for, checked, and only then written (docs/protocol/attachment-relay.md §5 steps 1-3).
/// One piece (≤ 65,560 bytes) is in memory at a time. The caller makes the file the file
/// (fsync, rename) only after its own last check, and deletes it after a final failure.
///
/// ```swift
/// var decryptor = AttachmentDecryptor(reference)
/// let resumedAt = try PartialAttachmentFile.fill(fd, storedLength: reference.length,
///                                                piece: { index throws(AttachmentTransferFailure) in try source.piece(index) },
///                                                check: { _, bytes in try decryptor.consume(bytes) { _ in } })
/// try decryptor.finish()   // the digest of all of S
/// ```
public enum PartialAttachmentFile {
    /// Fills the partial file open on `fd` (read and write). `piece` gives piece `i`'s bytes,
    /// or nil when its source holds none (`missingPiece`); `check` sees every piece of `S` once,
    /// in order, and nothing it refused is written; `progress` gets (pieces here, pieces in all)
    /// after each. Returns the piece the fill resumed at.
    @discardableResult
    public static func fill(_ fd: Int32, storedLength: Int,
                            piece: (Int) throws(AttachmentTransferFailure) -> [UInt8]?,
                            check: (Int, [UInt8]) throws -> Void,
                            progress: (Int, Int) -> Void = { _, _ in }) throws(AttachmentTransferFailure) -> Int {
        guard let pieces = AttachmentPieces.count(storedLength: storedLength) else { throw .notAStoredLength(storedLength) }
        let resumeAt = try cutToWholePieces(fd, storedLength: storedLength)
        for index in 0..<pieces {
            let range = AttachmentPieces.range(index, storedLength: storedLength)
            let bytes: [UInt8]
            if index < resumeAt {
                bytes = try read(fd, range)
            } else {
                guard let fetched = try piece(index) else { throw .missingPiece(index) }
                guard fetched.count == range.count else { throw .wrongPieceLength(piece: index, length: fetched.count, expected: range.count) }
                bytes = fetched
            }
            do { try check(index, bytes) } catch { throw .refused(piece: index, reason: String(describing: error)) }
            if index >= resumeAt { try write(fd, bytes, at: range.lowerBound) }
            progress(index + 1, pieces)
        }
        return resumeAt
    }

    /// Cuts the file to its whole pieces (what lay beyond was a write torn by a kill or a power
    /// cut) and returns how many it holds.
    public static func cutToWholePieces(_ fd: Int32, storedLength: Int) throws(AttachmentTransferFailure) -> Int {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .io("fstat: \(String(cString: strerror(errno)))") }
        let already = Int(status.st_size)
        let resumeAt = AttachmentPieces.wholePieces(in: already, storedLength: storedLength)
        let whole = resumeAt == 0 ? 0 : AttachmentPieces.range(resumeAt - 1, storedLength: storedLength).upperBound
        if already != whole { guard ftruncate(fd, off_t(whole)) == 0 else { throw .io("ftruncate: \(String(cString: strerror(errno)))") } }
        return resumeAt
    }

    // MARK: The local file

    /// Reads `range` of the file open on `fd` (a piece to check again, or to send).
    public static func read(_ fd: Int32, _ range: Range<Int>) throws(AttachmentTransferFailure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: range.count)
        var done = 0
        while done < range.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + done, range.count - done, off_t(range.lowerBound + done))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw .io(count == 0 ? "the file ends at \(range.lowerBound + done), before \(range.upperBound)" : "read: \(String(cString: strerror(errno)))")
            }
            done += count
        }
        return bytes
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int) throws(AttachmentTransferFailure) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                pwrite(fd, buffer.baseAddress! + done, bytes.count - done, off_t(offset + done))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .io("write: \(String(cString: strerror(errno)))") }
            done += count
        }
    }
}
