import SottoWire

/// Checks and opens a stored attachment as its bytes arrive (docs/protocol/attachments.md
/// §5), in any pieces: the header, then each chunk as soon as it is whole. A damaged chunk
/// is refused at that chunk, before a byte of the next is read; bytes past the final chunk,
/// a stream that ends early and a stored SHA-256 that is not the reference's are refused too.
/// Holds one sealed chunk and one opened chunk, whatever the file's size. Plaintext it has
/// emitted is not the file until `finish` returns: write it where nobody takes it for one.
///
/// ```swift
/// var decryptor = AttachmentDecryptor(reference)
/// try decryptor.consume(received) { plain in try write(plain) }   // as bytes arrive
/// try decryptor.finish()                                           // whole, and the stored bytes are the reference's
/// ```
public struct AttachmentDecryptor {
    public typealias Emit = (UnsafeRawBufferPointer) throws(AttachmentError) -> Void

    public let size: Int
    private let sha256: [UInt8]
    private let cipher: AttachmentChunkCipher
    private let chunkCount: Int
    private var hasher = SHA256Hasher()
    private var pending: [UInt8]
    private var pendingCount = 0
    private var plain: [UInt8]
    /// -1 while the header is read, then the chunk being read; `chunkCount` when all are.
    private var index = -1
    private var refusal: AttachmentError?
    private var finished = false

    // MARK: Starting

    /// Checks against `reference` (its size, id, key and SHA-256).
    public init(_ reference: AttachmentReference) {
        self.init(id: reference.id, key: reference.key, size: reference.size, sha256: reference.sha256)
    }

    public init(id: [UInt8], key: [UInt8], size: Int, sha256: [UInt8]) {
        precondition(size >= 0 && size <= AttachmentLayout.maxSize, "a reference's size was checked when it was decoded")
        self.size = size
        self.sha256 = sha256
        cipher = AttachmentChunkCipher(secret: key, id: id)
        chunkCount = AttachmentLayout.chunkCount(size)
        pending = [UInt8](repeating: 0, count: AttachmentLayout.chunkSize + AttachmentLayout.tagSize)
        plain = [UInt8](repeating: 0, count: AttachmentLayout.chunkSize)
    }

    /// The chunks opened so far.
    public var chunksOpened: Int { max(0, index) }

    // MARK: Streaming

    /// Takes the next stored bytes and emits the file's bytes of each chunk that opened.
    /// After a refusal every call throws it again.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer, emit: Emit) throws(AttachmentError) {
        if let refusal { throw refusal }
        if finished, !bytes.isEmpty { throw AttachmentError(.tooLong, "bytes after the stream was finished") }
        do throws(AttachmentError) {
            var offset = 0
            while offset < bytes.count {
                guard index < chunkCount else {
                    throw AttachmentError(.tooLong, "bytes after the final chunk (the reference says \(AttachmentLayout.storedLength(size)))")
                }
                let count = min(expected - pendingCount, bytes.count - offset)
                let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
                let start = pendingCount
                pending.withUnsafeMutableBytes { buffer in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + count)]).copyMemory(from: piece)
                }
                hasher.update(piece)
                pendingCount += count
                offset += count
                if pendingCount == expected { try completePiece(emit) }
            }
        } catch {
            refusal = error
            throw error
        }
    }

    public mutating func consume(_ bytes: [UInt8], emit: Emit) throws(AttachmentError) {
        let result: Result<Void, AttachmentError> = bytes.withUnsafeBytes { raw in
            Result { () throws(AttachmentError) in try consume(raw, emit: emit) }
        }
        try result.get()
    }

    /// The stream has ended: `attachment_truncated` when a chunk is missing, else
    /// `attachment_digest_mismatch` unless the stored bytes hash to the reference's SHA-256.
    public mutating func finish() throws(AttachmentError) {
        if let refusal { throw refusal }
        if finished { return }
        guard index == chunkCount else {
            let error = AttachmentError(.truncated, chunk: index < 0 ? nil : index,
                                        index < 0 ? "the stream ended in the header" : "the stream ended before chunk \(index) was whole")
            refusal = error
            throw error
        }
        guard hasher.finalize() == sha256 else {
            let error = AttachmentError(.digestMismatch, "the stored bytes' SHA-256 is not the reference's")
            refusal = error
            throw error
        }
        finished = true
    }

    // MARK: Chunks

    /// Bytes of the piece being read: the header, or chunk `index` with its tag.
    private var expected: Int {
        index < 0 ? AttachmentLayout.header.count
            : AttachmentLayout.chunkPlaintextSize(index, size: size) + AttachmentLayout.tagSize
    }

    private mutating func completePiece(_ emit: Emit) throws(AttachmentError) {
        defer { pendingCount = 0 }
        if index < 0 {
            guard pending[0..<AttachmentLayout.header.count].elementsEqual(AttachmentLayout.header) else {
                throw AttachmentError(.badHeader, "not a version 1 attachment header")
            }
            index = 0
            return
        }
        let length = pendingCount - AttachmentLayout.tagSize
        let cipher = cipher, index = index, final = index == chunkCount - 1, sealedCount = pendingCount
        let opened = pending.withUnsafeBytes { sealed in
            plain.withUnsafeMutableBytes { out in
                cipher.open(UnsafeRawBufferPointer(rebasing: sealed[0..<sealedCount]), index: index, final: final,
                            into: UnsafeMutableRawBufferPointer(rebasing: out[0..<length]))
            }
        }
        guard opened else { throw AttachmentError(.badChunk, chunk: index, "chunk \(index) does not authenticate") }
        // The file's bytes in this chunk; the rest is padding and must be zero.
        let fileBytes = max(0, min(length, size - index * AttachmentLayout.chunkSize))
        guard plain[fileBytes..<length].allSatisfy({ $0 == 0 }) else {
            throw AttachmentError(.badPadding, chunk: index, "chunk \(index)'s padding is not zero bytes")
        }
        self.index += 1
        if fileBytes > 0 {
            let result: Result<Void, AttachmentError> = plain.withUnsafeBytes { raw in
                Result { () throws(AttachmentError) in try emit(UnsafeRawBufferPointer(rebasing: raw[0..<fileBytes])) }
            }
            try result.get()
        }
    }
}
