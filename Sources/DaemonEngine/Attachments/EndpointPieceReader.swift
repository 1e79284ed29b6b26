import DaemonLogging
import Glibc
import SottoWire

/// Reads the pieces of a stored attachment file `S` from a device that holds it (the sender's,
/// or another member's that has it whole), on its own endpoint (docs/protocol/attachment-direct.md): one request line from the first piece
/// wanted, then the pieces in order on that connection; when the endpoint ends its answer
/// early (its serving budget, a kill), the next piece is asked for on a new connection. One
/// piece and one read buffer in memory. Used on one blocking thread, by
/// `PartialAttachmentFile.fill`.
///
/// ```swift
/// let reader = EndpointPieceReader(endpoint: "unix:/run/user/1000/sotto/push.sock", device: "the sender's device", messageId: m,
///                                  attachmentId: a, storedLength: reference.length)
/// defer { reader.close() }
/// try PartialAttachmentFile.fill(fd, storedLength: reference.length, piece: reader.piece, check: check)
/// ```
final class EndpointPieceReader {
    /// A connection silent this long is given up on (the fetch tries again later).
    static let silenceMs = 10_000

    let endpoint: String
    /// Whose device it is, for what the log and a failure say: "the sender's device", "a member's device".
    let device: String
    let messageId: String
    let attachmentId: String
    let storedLength: Int
    private var fd: Int32 = -1
    /// The piece the open connection delivers next.
    private var next = 0
    /// Bytes read past what was consumed (the answer line's tail, a piece's start).
    private var pending: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    init(endpoint: String, device: String, messageId: String, attachmentId: String, storedLength: Int) {
        self.endpoint = endpoint
        self.device = device
        self.messageId = messageId
        self.attachmentId = attachmentId
        self.storedLength = storedLength
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        pending = []
    }

    // MARK: Pieces

    /// Piece `index`: from the open connection when it is there, else from a new request.
    func piece(_ index: Int) throws(AttachmentTransferFailure) -> [UInt8]? {
        let length = AttachmentPieces.range(index, storedLength: storedLength).count
        if fd >= 0, next == index {
            if let bytes = try read(length) { next += 1; return bytes }
            close()  // the answer ended at a piece boundary (the endpoint's budget) or was cut inside one
            DaemonLog.info("attachment of message \(messageId.prefix(8)): \(device) ended its answer before piece \(index); asking again from there")
        }
        try request(from: index)
        guard let bytes = try read(length) else {
            close()
            throw .unreachable("\(device) (\(endpoint)) ended its answer before piece \(index)")
        }
        next += 1
        return bytes
    }

    // MARK: The exchange

    private func request(from index: Int) throws(AttachmentTransferFailure) {
        close()
        switch EndpointSocket.connect(endpoint) {
        case .success(let socket): fd = socket
        case .failure(.unreachable(let why)): throw .unreachable("\(device) (\(endpoint)): \(why)")
        case .failure(.badEndpoint(let why)): throw .notServed("the endpoint \(endpoint) of \(device): \(why)")
        }
        var timeout = timeval(tv_sec: Self.silenceMs / 1000, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let line = AttachmentFetchExchange.Request(messageId: messageId, attachmentId: attachmentId, firstPiece: index).line
        guard UnixSocket.sendAll(fd, line) else {
            close()
            throw .unreachable("\(device) (\(endpoint)): the request was not taken")
        }
        shutdown(fd, Int32(SHUT_WR))
        next = index
        let answer = try answerLine()
        switch AttachmentFetchExchange.answer(answer) {
        case .ok: return
        case .refused(.busy):
            close()
            throw .unreachable("\(device) is busy")
        case .refused(let refusal):
            close()
            throw .notServed("\(device) does not serve the file (\(refusal.rawValue))")
        case .notSpoken(let said):
            close()
            throw .notServed("\(device) does not serve files (it answered \"\(said)\")")
        }
    }

    /// The answer's first line, without its LF; what came after it stays in `pending`.
    private func answerLine() throws(AttachmentTransferFailure) -> [UInt8] {
        while true {
            if let lf = pending.firstIndex(of: 0x0a) {
                let line = Array(pending[..<lf])
                pending.removeFirst(lf + 1)
                return line
            }
            if pending.count > AttachmentFetchExchange.maxAnswerBytes {
                close()
                throw .notServed("\(device) does not serve files (its answer is not a line)")
            }
            switch receive() {
            case .bytes: continue
            case .ended:
                close()
                throw .unreachable("\(device) (\(endpoint)) closed without an answer")
            case .failed(let why):
                close()
                throw .unreachable("\(device) (\(endpoint)): \(why)")
            }
        }
    }

    /// Exactly `count` bytes, or nil when the answer ends first.
    private func read(_ count: Int) throws(AttachmentTransferFailure) -> [UInt8]? {
        while pending.count < count {
            switch receive() {
            case .bytes: continue
            case .ended: return nil
            case .failed(let why):
                close()
                throw .unreachable("\(device) (\(endpoint)): \(why)")
            }
        }
        let bytes = Array(pending[..<count])
        pending.removeFirst(count)
        return bytes
    }

    private enum Received { case bytes, ended, failed(String) }

    private func receive() -> Received {
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                pending.append(contentsOf: buffer[..<n])
                return .bytes
            }
            if n == 0 { return .ended }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .failed("silent for \(Self.silenceMs / 1000) s") }
            return .failed(String(cString: strerror(errno)))
        }
    }
}
