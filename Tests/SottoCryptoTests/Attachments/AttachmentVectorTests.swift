import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/attachment-v1.json through the library: the padding
/// table, the files (opened, and encrypted again to the same bytes), the damaged stored files
/// (refused with the named error, at the named chunk, before the chunk after it was read),
/// the references and the file names.
@Suite("Attachment vectors")
struct AttachmentVectorTests {
    // MARK: Layout

    @Test("The header, the chunk size, the limit and the padding table are the library's")
    func layout() throws {
        let file = try AttachmentVectors.load()
        #expect(file.header == AttachmentLayout.header)
        #expect(file.chunkSize == AttachmentLayout.chunkSize)
        #expect(file.maxSize == AttachmentLayout.maxSize)
        #expect(file.padding.count >= 20)
        for row in file.padding {
            #expect(AttachmentLayout.paddedSize(row.size) == row.paddedSize, "padded size of \(row.size)")
            #expect(AttachmentLayout.chunkCount(row.size) == row.chunks, "chunks of \(row.size)")
            #expect(AttachmentLayout.storedLength(row.size) == row.storedLength, "stored length of \(row.size)")
        }
    }

    // MARK: Files

    @Test("A file opens to its plaintext, and encrypting it again gives the same stored bytes",
          arguments: AttachmentVectors.fileNamesList)
    func fileCase(name: String) throws {
        let vector = try #require(try AttachmentVectors.load().files.first { $0.name == name })
        let reference = try AttachmentReference.decode(vector.reference)
        #expect(reference.size == vector.size && reference.length == vector.stored.count)
        #expect(SHA256.hash(vector.stored) == reference.sha256)
        #expect(HKDFSHA256.derive(ikm: reference.key, salt: reference.id, info: Array("sotto/attachment/v1/chunk-key".utf8),
                                  length: 32) == vector.chunkKey)

        var decryptor = AttachmentDecryptor(reference)
        var plain: [UInt8] = []
        try decryptor.consume(vector.stored) { plain += $0 }
        try decryptor.finish()
        #expect(plain == vector.plaintext)

        // Deterministic given id and key: padding, nonces and AAD are all fixed.
        var encryptor = try AttachmentEncryptor(size: vector.size, id: reference.id, key: reference.key)
        var stored: [UInt8] = []
        try encryptor.consume(vector.plaintext) { stored += $0 }
        let digest = try encryptor.finish { stored += $0 }
        #expect(stored == vector.stored)
        #expect(digest == reference.sha256)
        #expect(try AttachmentReference.decode(reference.encode()) == reference)
    }

    @Test("A file opens through file descriptors too", arguments: AttachmentVectors.fileNamesList)
    func fileThroughDescriptors(name: String) throws {
        let vector = try #require(try AttachmentVectors.load().files.first { $0.name == name })
        let reference = try AttachmentReference.decode(vector.reference)
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let storedPath = temp.path + "/stored", plainPath = temp.path + "/plain"
        #expect(FileManager.default.createFile(atPath: storedPath, contents: Data(vector.stored)))
        let source = open(storedPath, O_RDONLY), sink = open(plainPath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        defer { close(source); close(sink) }
        try AttachmentFile.decrypt(from: source, reference: reference, to: sink)
        #expect(FileManager.default.contents(atPath: plainPath).map(Array.init) == vector.plaintext)
    }

    // MARK: Damaged stored files

    @Test("A damaged stored file is refused with its error, at its chunk, before the next is read",
          arguments: AttachmentVectors.storedNames)
    func storedCase(name: String) throws {
        let vector = try #require(try AttachmentVectors.load().stored.first { $0.name == name })
        let reference = try AttachmentReference.decode(vector.reference)
        var decryptor = AttachmentDecryptor(reference)
        var emitted = 0
        var fed = 0
        var refusal: AttachmentError?
        // Fed 4096 bytes at a time, as a network would: a refusal must come in the piece
        // that completes its chunk.
        let piece = 4096
        do {
            while fed < vector.bytes.count {
                let start = fed
                fed = min(start + piece, vector.bytes.count)
                try decryptor.consume(Array(vector.bytes[start..<fed])) { emitted += $0.count }
            }
            try decryptor.finish()
        } catch {
            refusal = error
        }
        let error = try #require(refusal, "\(name) was accepted")
        #expect(error.code.rawValue == vector.error, "\(name): \(error)")
        if let chunk = vector.chunk {
            #expect(error.chunk == chunk, "\(name): \(error)")
            // The refusal came with the piece that completed chunk `chunk`, not later.
            let chunkEnd = AttachmentLayout.header.count + (0...chunk).reduce(0) {
                $0 + AttachmentLayout.chunkPlaintextSize($1, size: reference.size) + AttachmentLayout.tagSize
            }
            #expect(fed >= chunkEnd && fed < chunkEnd + piece, "\(name): refused after \(fed) bytes, chunk \(chunk) ends at \(chunkEnd)")
            // Nothing of the refused chunk was handed on.
            #expect(emitted == min(reference.size, chunk * AttachmentLayout.chunkSize))
        }
    }

    // MARK: References and names

    @Test("A reference is decoded or refused as malformed_message", arguments: AttachmentVectors.referenceNames)
    func referenceCase(name: String) throws {
        let vector = try #require(try AttachmentVectors.load().references.first { $0.name == name })
        do {
            let reference = try AttachmentReference.decode(vector.content)
            #expect(vector.ok, "\(name) was accepted")
            #expect(try AttachmentReference.decode(reference.encode()) == reference)
        } catch {
            #expect(!vector.ok, "\(name): \(error)")
            #expect(error.code == .malformedMessage)
        }
    }

    @Test("Every hostile file name becomes the vector's safe name")
    func fileNames() throws {
        let file = try AttachmentVectors.load()
        #expect(file.fileNames.count >= 20)
        for (name, safe) in file.fileNames {
            #expect(AttachmentFileName.safe(name) == safe, "\(name.debugDescription)")
        }
    }

    @Test("The vectors cover every refusal of the stored file")
    func coverage() throws {
        let file = try AttachmentVectors.load()
        let codes = Set(file.stored.map(\.error))
        let wire: [AttachmentError.Code] = [.badHeader, .badChunk, .badPadding, .truncated, .tooLong, .digestMismatch]
        #expect(codes == Set(wire.map(\.rawValue)))
        #expect(file.references.filter(\.ok).count >= 5 && file.references.filter { !$0.ok }.count >= 30)
    }
}
