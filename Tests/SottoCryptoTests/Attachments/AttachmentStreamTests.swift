import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// The streaming encryptor and decryptor with sizes at the chunk and padding edges, pieces
/// of any size, a sender whose file changes under it, and garbage.
@Suite("Attachment streams")
struct AttachmentStreamTests {
    // MARK: Round trips

    @Test("Round trip in random pieces", arguments: [0, 1, 4095, 4096, 4097, 65_535, 65_536, 65_537, 131_073, 300_001])
    func roundTrip(size: Int) throws {
        var rng = SeededGenerator(state: UInt64(size) &+ 0xA77A)
        let file = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var encryptor = try AttachmentEncryptor(size: size)
        var stored: [UInt8] = []
        for piece in pieces(of: file, using: &rng) { try encryptor.consume(piece) { stored += $0 } }
        let digest = try encryptor.finish { stored += $0 }
        #expect(stored.count == AttachmentLayout.storedLength(size))
        #expect(digest == SHA256.hash(stored))

        let reference = try AttachmentReference.decode(
            AttachmentReference(id: encryptor.id, size: size, sha256: digest, key: encryptor.key, name: "f", mediaType: "application/octet-stream").encode())
        var decryptor = AttachmentDecryptor(reference)
        var plain: [UInt8] = []
        for piece in pieces(of: stored, using: &rng) { try decryptor.consume(piece) { plain += $0 } }
        try decryptor.finish()
        #expect(plain == file)
        #expect(decryptor.chunksOpened == AttachmentLayout.chunkCount(size))
    }

    @Test("A file over 100 MiB is refused before anything is read")
    func tooLarge() {
        do { _ = try AttachmentEncryptor(size: AttachmentLayout.maxSize + 1); Issue.record("accepted") } catch { #expect(error.code == .tooLarge) }
        #expect((try? AttachmentEncryptor(size: AttachmentLayout.maxSize)) != nil)
    }

    @Test("A source with more or fewer bytes than stated is refused")
    func sourceChanged() throws {
        var longer = try AttachmentEncryptor(size: 10)
        do { try longer.consume([UInt8](repeating: 1, count: 11)) { _ in }; Issue.record("accepted 11 of 10") } catch {
            #expect(error.code == .sourceChanged)
        }
        var shorter = try AttachmentEncryptor(size: 10)
        try shorter.consume([UInt8](repeating: 1, count: 9)) { _ in }
        do { _ = try shorter.finish { _ in }; Issue.record("accepted 9 of 10") } catch { #expect(error.code == .sourceChanged) }
    }

    @Test("A file that grows while it is encrypted through a descriptor is refused")
    func growingFile() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        #expect(FileManager.default.createFile(atPath: temp.path + "/f", contents: Data(repeating: 7, count: 70_000)))
        let source = open(temp.path + "/f", O_RDONLY), sink = open("/dev/null", O_WRONLY)
        defer { close(source); close(sink) }
        do { _ = try AttachmentFile.encrypt(from: source, size: 69_999, to: sink); Issue.record("accepted") } catch {
            #expect(error.code == .sourceChanged)
        }
    }

    // MARK: Damage

    @Test("A bit flipped anywhere in a stored file is refused, never opened")
    func everyBitFlip() throws {
        let size = 5000
        var encryptor = try AttachmentEncryptor(size: size)
        var stored: [UInt8] = []
        try encryptor.consume([UInt8](repeating: 0x61, count: size)) { stored += $0 }
        let digest = try encryptor.finish { stored += $0 }
        let reference = AttachmentReference(id: encryptor.id, size: size, sha256: digest, key: encryptor.key, name: "f", mediaType: "text/plain")
        for index in stored.indices {
            var damaged = stored
            damaged[index] ^= 0x80
            var decryptor = AttachmentDecryptor(reference)
            do {
                try decryptor.consume(damaged) { _ in }
                try decryptor.finish()
                Issue.record("a flip at \(index) opened")
            } catch {
                #expect(error.code == (index < AttachmentLayout.header.count ? .badHeader : .badChunk), "flip at \(index)")
            }
        }
    }

    @Test("After a refusal the decryptor keeps refusing, and bytes after finish are too long")
    func refusalSticks() throws {
        var encryptor = try AttachmentEncryptor(size: 1)
        var stored: [UInt8] = []
        try encryptor.consume([1]) { stored += $0 }
        let digest = try encryptor.finish { stored += $0 }
        let reference = AttachmentReference(id: encryptor.id, size: 1, sha256: digest, key: encryptor.key, name: "f", mediaType: "text/plain")
        var good = AttachmentDecryptor(reference)
        try good.consume(stored) { _ in }
        try good.finish()
        do { try good.consume([0]) { _ in }; Issue.record("accepted a byte after finish") } catch { #expect(error.code == .tooLong) }

        var bad = AttachmentDecryptor(reference)
        do { try bad.consume([0, 0, 0, 0, 0, 0, 0, 0]) { _ in } } catch { #expect(error.code == .badHeader) }
        do { try bad.consume(Array(stored.dropFirst(8))) { _ in }; Issue.record("accepted after a refusal") } catch {
            #expect(error.code == .badHeader)
        }
    }

    // MARK: Garbage

    @Test("Random bytes as a stored file are refused with a named error, never a crash")
    func randomStoredFiles() throws {
        var rng = SeededGenerator(state: 0xA77A_6A12)
        for round in 0..<300 {
            let size = [0, 1, 4097, 65_537, 200_000][round % 5]
            let reference = AttachmentReference(id: SecureRandom.bytes(16), size: size, sha256: SecureRandom.bytes(32),
                                                key: SecureRandom.bytes(32), name: "f", mediaType: "a/b")
            let length = [0, 7, 8, 100, AttachmentLayout.storedLength(size), AttachmentLayout.storedLength(size) + 1][round % 6]
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if round % 2 == 0, bytes.count >= 8 { bytes.replaceSubrange(0..<8, with: AttachmentLayout.header) }
            var decryptor = AttachmentDecryptor(reference)
            do {
                try decryptor.consume(bytes) { _ in }
                try decryptor.finish()
                Issue.record("random bytes opened")
            } catch {
                let expected: Set<AttachmentError.Code> = [.badHeader, .badChunk, .truncated]
                #expect(expected.contains(error.code), "\(error)")
            }
        }
    }

    @Test("Random and mutated references are decoded or refused as malformed_message, never a crash")
    func garbageReferences() throws {
        var rng = SeededGenerator(state: 0xA77A_0BAD)
        let valid = AttachmentReference(id: SecureRandom.bytes(16), size: 65_537, sha256: SecureRandom.bytes(32), key: SecureRandom.bytes(32),
                                        name: "photo.jpg", mediaType: "image/jpeg", caption: "hi",
                                        thumbnail: [0xFF, 0xD8, 0xFF] + SecureRandom.bytes(40)).encode()
        var decoded = 0
        for round in 0..<3000 {
            let input = round % 3 == 0 ? (0..<Int.random(in: 0..<300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                : rng.mutate(valid)
            do {
                let reference = try AttachmentReference.decode(input)
                decoded += 1
                #expect(try AttachmentReference.decode(reference.encode()) == reference)
            } catch {
                #expect(error.code == .malformedMessage)
            }
        }
        #expect(decoded > 0 && decoded < 3000)
    }

    // MARK: Helpers

    private func pieces(of bytes: [UInt8], using rng: inout SeededGenerator) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, [1, 7, 4096, 65_535, 65_537, 100_000][Int.random(in: 0..<6, using: &rng)])
            out.append(Array(bytes[offset..<(offset + count)]))
            offset += count
        }
        return out
    }
}
