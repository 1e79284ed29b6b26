import SottoWire

/// Encrypts one file into its stored form (docs/protocol/attachments.md §4) as its bytes
/// arrive: the header, then each 64 KiB chunk sealed as soon as it is full, the padding
/// sealed at `finish`. It holds one chunk of plaintext and one sealed chunk, whatever the
/// file's size.
///
/// ```swift
/// var encryptor = try AttachmentEncryptor(size: fileSize)        // fresh id and key
/// try encryptor.consume(part) { sealed in try write(sealed) }    // as often as needed
/// let digest = try encryptor.finish { sealed in try write(sealed) }
/// let reference = AttachmentReference(id: encryptor.id, size: fileSize, sha256: digest,
///                                     key: encryptor.key, name: "photo.jpg", mediaType: "image/jpeg")
/// ```
public struct AttachmentEncryptor {
    public typealias Emit = (UnsafeRawBufferPointer) throws(AttachmentError) -> Void

    /// 16 random bytes unless given.
    public let id: [UInt8]
    /// The 32-byte secret the reference carries.
    public let key: [UInt8]
    /// The file's bytes, stated before the first: the padding and the chunk count follow from it.
    public let size: Int

    private let cipher: AttachmentChunkCipher
    private let chunkCount: Int
    private var hasher = SHA256Hasher()
    private var plain: [UInt8]
    private var sealed: [UInt8]
    private var filled = 0
    private var index = 0
    private var taken = 0
    private var startedOutput = false

    // MARK: Starting

    /// `attachment_too_large` above `AttachmentLayout.maxSize`.
    public init(size: Int, id: [UInt8] = SecureRandom.bytes(16), key: [UInt8] = SecureRandom.bytes(32)) throws(AttachmentError) {
        guard size >= 0, size <= AttachmentLayout.maxSize else {
            throw AttachmentError(.tooLarge, "\(size) bytes is more than the \(AttachmentLayout.maxSize) an attachment may have")
        }
        self.id = id
        self.key = key
        self.size = size
        cipher = AttachmentChunkCipher(secret: key, id: id)
        chunkCount = AttachmentLayout.chunkCount(size)
        plain = [UInt8](repeating: 0, count: AttachmentLayout.chunkSize)
        sealed = [UInt8](repeating: 0, count: AttachmentLayout.chunkSize + AttachmentLayout.tagSize)
    }

    // MARK: Streaming

    /// Takes the file's next bytes; emits whatever became stored bytes (the header first).
    /// `attachment_source_changed` when they pass the stated size.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer, emit: Emit) throws(AttachmentError) {
        guard bytes.count <= size - taken else {
            throw AttachmentError(.sourceChanged, "the file has more than the \(size) bytes it was stated to have")
        }
        try startOutput(emit)
        var offset = 0
        while offset < bytes.count {
            let room = AttachmentLayout.chunkPlaintextSize(index, size: size) - filled
            let count = min(room, bytes.count - offset)
            _ = plain.withUnsafeMutableBytes { buffer in
                UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
            }
            filled += count
            taken += count
            offset += count
            if filled == AttachmentLayout.chunkPlaintextSize(index, size: size) { try sealChunk(emit) }
        }
    }

    public mutating func consume(_ bytes: [UInt8], emit: Emit) throws(AttachmentError) {
        let result: Result<Void, AttachmentError> = bytes.withUnsafeBytes { raw in
            Result { () throws(AttachmentError) in try consume(raw, emit: emit) }
        }
        try result.get()
    }

    /// Pads with zero bytes, seals the chunks left and returns the SHA-256 of everything
    /// emitted. `attachment_source_changed` when fewer than the stated size came.
    public mutating func finish(emit: Emit) throws(AttachmentError) -> [UInt8] {
        guard taken == size else {
            throw AttachmentError(.sourceChanged, "the file has \(taken) bytes, not the \(size) it was stated to have")
        }
        try startOutput(emit)
        while index < chunkCount {
            let chunkSize = AttachmentLayout.chunkPlaintextSize(index, size: size)
            _ = plain.withUnsafeMutableBytes { buffer in
                UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<chunkSize]).initializeMemory(as: UInt8.self, repeating: 0)
            }
            filled = chunkSize
            try sealChunk(emit)
        }
        return hasher.finalize()
    }

    // MARK: Chunks

    private mutating func startOutput(_ emit: Emit) throws(AttachmentError) {
        guard !startedOutput else { return }
        startedOutput = true
        try emitAndHash(AttachmentLayout.header, emit)
    }

    private mutating func sealChunk(_ emit: Emit) throws(AttachmentError) {
        let final = index == chunkCount - 1
        let count = filled
        let cipher = cipher, index = index
        plain.withUnsafeBytes { plain in
            sealed.withUnsafeMutableBytes { out in
                cipher.seal(UnsafeRawBufferPointer(rebasing: plain[0..<count]), index: index, final: final,
                            into: UnsafeMutableRawBufferPointer(rebasing: out[0..<(count + AttachmentLayout.tagSize)]))
            }
        }
        let length = count + AttachmentLayout.tagSize
        let result: Result<Void, AttachmentError> = sealed.withUnsafeBytes { raw in
            let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<length])
            hasher.update(chunk)
            return Result { () throws(AttachmentError) in try emit(chunk) }
        }
        try result.get()
        self.index += 1
        filled = 0
    }

    private mutating func emitAndHash(_ bytes: [UInt8], _ emit: Emit) throws(AttachmentError) {
        hasher.update(bytes)
        let result: Result<Void, AttachmentError> = bytes.withUnsafeBytes { raw in
            Result { () throws(AttachmentError) in try emit(raw) }
        }
        try result.get()
    }
}
