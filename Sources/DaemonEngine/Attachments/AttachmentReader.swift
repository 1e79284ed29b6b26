import Glibc
import NIOPosix
import SottoCrypto
import SottoWire

/// Opens a stored attachment file and hands on the file's bytes chunk by chunk, each checked
/// as it comes (docs/protocol/attachments.md §5: every tag, the padding, the length, and the
/// SHA-256 of the stored file at the end), to a consumer that may be slow: the next chunk is
/// read only when the consumer has taken the last one, so memory stays a few chunks whatever
/// the file's size. The reads and the decryption run on a lane of their own (blocking file
/// I/O never on the cooperative pool); the consumer runs on the caller's task.
///
/// ```swift
/// let outcome = try await AttachmentReader.shared.read(path: stored.path, reference: stored.reference,
///     prepare: { bytes, offset in Array(bytes) }) { piece in await client.take(piece) }
/// if outcome == .abandoned { … }   // the consumer stopped (its client went away)
/// ```
public final class AttachmentReader: Sendable {
    /// Why a stored file was not read to its end.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// It cannot be opened or read: errno's words.
        case unreadable(path: String, reason: String)
        /// A check of §5 refused it (a damaged chunk, a cut, the digest).
        case refused(AttachmentError)
        /// The daemon is stopping.
        case stopping

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): return "cannot read the stored file \(path): \(reason)"
            case .refused(let error):
                return "the stored file does not verify (\(error.description)); its bytes were not the file"
            case .stopping: return "the daemon is shutting down"
            }
        }
    }

    /// How a read ended when nothing failed.
    public enum Outcome: Sendable, Equatable {
        /// Every chunk opened and the digest is the reference's: the bytes handed on were the file.
        case complete
        /// The consumer said stop (its client went away); the file was closed.
        case abandoned
    }

    /// The daemon's reader: two saves read at once, on two threads of their own.
    public static let shared = AttachmentReader(threads: 2)

    private let lane: NIOThreadPool

    public init(threads: Int) {
        lane = NIOThreadPool(numberOfThreads: threads)
        lane.start()
    }

    deinit { lane.shutdownGracefully { _ in } }

    // MARK: Reading

    /// Reads the stored file at `path` against `reference`: for each chunk's file bytes
    /// (none for an empty file), `prepare` runs on the lane (make the line to send there) and
    /// `consume` on the caller, which returns false to stop. Returns `.complete` only after
    /// the last chunk and the digest checked; throws at the first refusal. The file is
    /// closed before it returns or throws.
    public func read<Piece: Sendable>(path: String, reference: AttachmentReference,
                                      prepare: @escaping @Sendable (UnsafeRawBufferPointer, _ offset: Int) -> Piece,
                                      consume: (Piece) async -> Bool) async throws(Failure) -> Outcome {
        let cursor = try await run { () throws(Failure) in try Cursor(path: path, reference: reference) }
        defer { cursor.close() }
        while true {
            let piece = try await run { () throws(Failure) in try cursor.next(prepare) }
            switch piece {
            case .piece(let value):
                guard await consume(value) else { return .abandoned }
            case .end:
                return .complete
            }
        }
    }

    /// `body` on the lane; its error as it came.
    private func run<T: Sendable>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let result: Result<T, Failure>
        do {
            result = try await lane.runIfActive { Result { () throws(Failure) in try body() } }
        } catch {
            throw .stopping
        }
        return try result.get()
    }

    // MARK: One file

    private enum Step<Piece: Sendable>: Sendable {
        case piece(Piece)
        case end
    }

    /// One open stored file and its decryptor. Used by one read at a time, one step after the
    /// other (each step awaits the one before), so never by two threads at once.
    private final class Cursor: @unchecked Sendable {
        private var fd: Int32
        private let path: String
        private var decryptor: AttachmentDecryptor
        /// One sealed chunk (its tag included): each read is at most one chunk, so each step
        /// opens at most one and hands on at most 65,536 bytes.
        private var buffer = [UInt8](repeating: 0, count: AttachmentLayout.chunkSize + AttachmentLayout.tagSize)
        private var plain = [UInt8]()
        private var offset = 0
        /// Bytes of the stored file read so far (the header's 8 first, then one chunk at a time).
        private var storedRead = 0

        init(path: String, reference: AttachmentReference) throws(Failure) {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
            guard fd >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            self.path = path
            decryptor = AttachmentDecryptor(reference)
            plain.reserveCapacity(AttachmentLayout.chunkSize)
        }

        func close() {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }

        /// Reads until a chunk opens (its file bytes prepared), or the end (checked).
        func next<Piece: Sendable>(_ prepare: (UnsafeRawBufferPointer, Int) -> Piece) throws(Failure) -> Step<Piece> {
            while true {
                // Exactly the rest of the header, then of one sealed chunk: a read never spans two.
                let want = storedRead < AttachmentLayout.header.count
                    ? AttachmentLayout.header.count - storedRead
                    : AttachmentLayout.chunkSize + AttachmentLayout.tagSize
                    - (storedRead - AttachmentLayout.header.count) % (AttachmentLayout.chunkSize + AttachmentLayout.tagSize)
                let count = try readSome(max: want)
                if count == 0 {
                    do { try decryptor.finish() } catch { throw .refused(error) }
                    return .end
                }
                storedRead += count
                plain.removeAll(keepingCapacity: true)
                let opened: Result<Void, AttachmentError> = buffer.withUnsafeBytes { raw in
                    Result { () throws(AttachmentError) in
                        try decryptor.consume(UnsafeRawBufferPointer(rebasing: raw[0..<count])) { bytes in
                            plain.append(contentsOf: bytes)
                        }
                    }
                }
                if case .failure(let error) = opened { throw .refused(error) }
                if !plain.isEmpty {
                    let at = offset
                    offset += plain.count
                    return .piece(plain.withUnsafeBytes { prepare($0, at) })
                }
            }
        }

        private func readSome(max: Int) throws(Failure) -> Int {
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min(max, $0.count)) }
                if count >= 0 { return count }
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
        }
    }
}
