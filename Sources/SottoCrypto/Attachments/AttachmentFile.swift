import Glibc
import SottoWire

/// Encrypts a file into its stored form and opens one again, between file descriptors (or
/// pipes, or sockets), reading and writing 64 KiB at a time: memory stays one chunk's worth
/// whatever the size (docs/protocol/attachments.md §4, §5).
///
/// ```swift
/// let sealed = try AttachmentFile.encrypt(from: fileFD, size: fileSize, to: storedFD)
/// let reference = sealed.reference(name: "photo.jpg", mediaType: "image/jpeg")
/// try AttachmentFile.decrypt(from: storedFD2, reference: reference, to: plainFD)
/// ```
public enum AttachmentFile {
    static let readSize = AttachmentLayout.chunkSize

    /// What encrypting a file gave: everything its reference needs but the names.
    public struct Encrypted: Sendable, Equatable {
        public let id: [UInt8]
        public let key: [UInt8]
        public let size: Int
        public let sha256: [UInt8]

        public func reference(name: String, mediaType: String, caption: String? = nil,
                              thumbnail: [UInt8]? = nil) -> AttachmentReference {
            AttachmentReference(id: id, size: size, sha256: sha256, key: key, name: name, mediaType: mediaType,
                                caption: caption, thumbnail: thumbnail)
        }
    }

    // MARK: Encrypting

    /// Reads exactly `size` bytes from `source` to its end and writes the stored file to
    /// `sink`. `attachment_too_large` before reading anything; `attachment_source_changed`
    /// when the source has more or fewer bytes; `attachment_io` when a read or write fails.
    public static func encrypt(from source: Int32, size: Int, to sink: Int32, id: [UInt8] = SecureRandom.bytes(16),
                               key: [UInt8] = SecureRandom.bytes(32)) throws(AttachmentError) -> Encrypted {
        var encryptor = try AttachmentEncryptor(size: size, id: id, key: key)
        var buffer = [UInt8](repeating: 0, count: readSize)
        while true {
            let count = try read(source, into: &buffer)
            if count == 0 { break }
            let result: Result<Void, AttachmentError> = buffer.withUnsafeBytes { raw in
                Result { () throws(AttachmentError) in
                    try encryptor.consume(UnsafeRawBufferPointer(rebasing: raw[0..<count])) { (bytes) throws(AttachmentError) in
                        try write(sink, bytes)
                    }
                }
            }
            try result.get()
        }
        let digest = try encryptor.finish { (bytes) throws(AttachmentError) in try write(sink, bytes) }
        return Encrypted(id: id, key: key, size: size, sha256: digest)
    }

    // MARK: Decrypting

    /// Reads the stored file from `source` to its end, checking each chunk as it comes, and
    /// writes the file's bytes to `sink`. Throws at the first refusal, without reading
    /// further; what was written before it is not the file (the caller discards it).
    public static func decrypt(from source: Int32, reference: AttachmentReference, to sink: Int32) throws(AttachmentError) {
        var decryptor = AttachmentDecryptor(reference)
        var buffer = [UInt8](repeating: 0, count: readSize)
        while true {
            let count = try read(source, into: &buffer)
            if count == 0 { break }
            let result: Result<Void, AttachmentError> = buffer.withUnsafeBytes { raw in
                Result { () throws(AttachmentError) in
                    try decryptor.consume(UnsafeRawBufferPointer(rebasing: raw[0..<count])) { (bytes) throws(AttachmentError) in
                        try write(sink, bytes)
                    }
                }
            }
            try result.get()
        }
        try decryptor.finish()
    }

    // MARK: I/O

    private static func read(_ fd: Int32, into buffer: inout [UInt8]) throws(AttachmentError) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw AttachmentError(.io, "read failed: errno \(errno)")
        }
    }

    private static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(AttachmentError) {
        if let code = FileWrite.all(fd, bytes) { throw AttachmentError(.io, "write failed: errno \(code)") }
    }
}
