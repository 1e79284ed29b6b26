import Foundation
import Glibc
import SottoCrypto
import SottoWire
import TestSupport
import Testing
@testable import DaemonEngine

/// `AttachmentReader` on real stored files (docs/adr/0077): the file's bytes in order, one
/// chunk's worth per piece; a damaged chunk refused before any of its bytes is handed on; a
/// consumer that stops ends the read; the file is closed in every case.
@Suite("Attachment reader")
struct AttachmentReaderTests {
    /// A stored file of `count` bytes at `tmp/stored`, and its reference and plaintext.
    static func stored(_ tmp: TemporaryDirectory, count: Int) throws -> (String, AttachmentReference, [UInt8]) {
        let plain = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let source = tmp.path + "/plain", path = tmp.path + "/stored"
        try Data(plain).write(to: URL(fileURLWithPath: source))
        let input = open(source, O_RDONLY), output = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(input); close(output) }
        let sealed = try AttachmentFile.encrypt(from: input, size: count, to: output)
        return (path, sealed.reference(name: "f", mediaType: "application/octet-stream"), plain)
    }

    /// Descriptors of this process that point at `path`.
    static func openCount(_ path: String) -> Int {
        let directory = "/proc/self/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0)) == path
        }.count
    }

    @Test("0, 1, 65,536 and 300,000 bytes: the file in order, at most 65,536 bytes a piece, offsets contiguous, the file closed")
    func readsInOrder() async throws {
        let tmp = try TemporaryDirectory(prefix: "attread")
        let reader = AttachmentReader(threads: 1)
        for count in [0, 1, 65_536, 300_000] {
            let (path, reference, plain) = try Self.stored(tmp, count: count)
            var received: [UInt8] = []
            var pieces = 0
            let outcome = try await reader.read(path: path, reference: reference,
                                                prepare: { bytes, offset in (offset, Array(bytes)) }) { offset, bytes in
                #expect(offset == received.count && bytes.count <= AttachmentLayout.chunkSize && !bytes.isEmpty)
                received += bytes
                pieces += 1
                return true
            }
            #expect(outcome == .complete && received == plain, "\(count)")
            #expect(pieces == (count + AttachmentLayout.chunkSize - 1) / AttachmentLayout.chunkSize, "\(count)")
            #expect(Self.openCount(path) == 0)
        }
    }

    @Test("a byte flipped in chunk 3: chunks 0-2 handed on, then attachment_bad_chunk at 3, none of its bytes; the file closed")
    func damagedChunk() async throws {
        let tmp = try TemporaryDirectory(prefix: "attread")
        let (path, reference, plain) = try Self.stored(tmp, count: 300_000)
        var stored = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        stored[AttachmentLayout.header.count + 3 * (AttachmentLayout.chunkSize + AttachmentLayout.tagSize) + 10] ^= 0x80
        try Data(stored).write(to: URL(fileURLWithPath: path))
        var received: [UInt8] = []
        await #expect(throws: AttachmentReader.Failure.self) {
            _ = try await AttachmentReader(threads: 1).read(path: path, reference: reference,
                                                            prepare: { bytes, _ in Array(bytes) }) { bytes in
                received += bytes
                return true
            }
        }
        do {
            _ = try await AttachmentReader(threads: 1).read(path: path, reference: reference, prepare: { _, _ in 0 }) { _ in true }
            Issue.record("the damaged file was read to its end")
        } catch {
            guard case .refused(let refusal) = error else { Issue.record("\(error)"); return }
            #expect(refusal.code == .badChunk && refusal.chunk == 3)
        }
        #expect(received == Array(plain[0..<(3 * AttachmentLayout.chunkSize)]))
        #expect(Self.openCount(path) == 0)
    }

    @Test("a consumer that says stop ends the read at once (abandoned), the file closed; a missing file is unreadable")
    func stops() async throws {
        let tmp = try TemporaryDirectory(prefix: "attread")
        let (path, reference, _) = try Self.stored(tmp, count: 300_000)
        var pieces = 0
        let outcome = try await AttachmentReader(threads: 1).read(path: path, reference: reference, prepare: { _, _ in 0 }) { _ in
            pieces += 1
            return pieces < 2
        }
        #expect(outcome == .abandoned && pieces == 2)
        #expect(Self.openCount(path) == 0)
        await #expect(throws: AttachmentReader.Failure.unreadable(path: tmp.path + "/none", reason: "No such file or directory")) {
            _ = try await AttachmentReader(threads: 1).read(path: tmp.path + "/none", reference: reference,
                                                            prepare: { _, _ in 0 }) { _ in true }
        }
    }
}
