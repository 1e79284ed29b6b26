import Glibc
import SharedStore
import SottoCrypto
import SottoWire

/// Where another device fetches a stored attachment file `S` from this one, on the push socket
/// (docs/protocol/attachment-direct.md): the request names the attachment message and its
/// reference's id; the file is served only when this device holds that message, its sealed
/// reference opens to that id, its conversation has not exploded, and `S` is whole here under
/// its final name. Then `S` goes out from the first piece asked for, whole pieces in order
/// (`sendfile`, so one piece is never even in this process's memory), until its end or the
/// serving budget, and the connection closes: the fetcher asks again from the next piece.
///
/// ```swift
/// if case .payload(let line) = first, AttachmentFetchExchange.opens(line) {
///     StoredAttachmentServer(processor: processor, budgetMs: 20_000).serve(line, on: fd)
/// }
/// ```
struct StoredAttachmentServer {
    /// Serving one connection under Accept=yes (its own process, inside the 30 s deadline).
    static let connectionBudgetMs: Int64 = 20_000
    /// Under Accept=no the one warm worker serves others too: a fetcher gets this long, then
    /// asks again.
    static let sharedBudgetMs: Int64 = 1_000
    /// A fetcher that takes nothing for this long is given up on.
    static let stalledReaderMs = 10_000

    let processor: PushProcessor
    let budgetMs: Int64

    /// Answers the request line (without its LF) on `fd` (blocking); the caller closes.
    func serve(_ line: [UInt8], on fd: Int32) {
        let startedAt = MonotonicClock.nowMs()
        guard let request = AttachmentFetchExchange.request(line) else { return refuse(.badRequest, on: fd, "a malformed request") }
        let file: Found
        switch find(request) {
        case .found(let found): file = found
        case .refused(let refusal, let why): return refuse(refusal, on: fd, why)
        }
        defer { close(file.fd) }
        guard let pieces = AttachmentPieces.count(storedLength: file.length), request.firstPiece < pieces else {
            return refuse(.badRequest, on: fd, "piece \(request.firstPiece) is past the file's end")
        }
        var timeout = timeval(tv_sec: Self.stalledReaderMs / 1000, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard UnixSocket.sendAll(fd, AttachmentFetchExchange.okLine + [0x0a]) else { return }
        var sent = request.firstPiece
        // At least one piece after `ok`, whatever the look-up took, so every answer moves the fetch on.
        while sent < pieces, sent == request.firstPiece || MonotonicClock.nowMs() - startedAt < budgetMs {
            CrashPoint.reach("attachment.serve")  // `attachment.serve@N`: dies before the Nth piece of a connection
            guard send(piece: sent, of: file, to: fd) else { break }
            sent += 1
        }
        // One line per answer, with the budget's figure (24 MB: systemd/sotto-push@.service).
        var usage = rusage()
        let peak = getrusage(RUSAGE_SELF.rawValue, &usage) == 0 ? ", peak RSS \(usage.ru_maxrss) KiB" : ""
        WorkerLog.info("attachment served: message=\(request.messageId.prefix(8)) pieces \(request.firstPiece)..<\(sent) of \(pieces)\(peak)")
    }

    // MARK: Finding the file

    private struct Found {
        let fd: Int32
        let length: Int
    }

    private enum Lookup {
        case found(Found)
        case refused(AttachmentFetchExchange.Refusal, String)
    }

    private func find(_ request: AttachmentFetchExchange.Request) -> Lookup {
        let unknown = Lookup.refused(.unknownAttachment, "no such attachment here")
        let reference: AttachmentReference
        let conversationId: String
        do throws(StoreError) {
            let conn = try processor.database()
            guard let message = try ServedAttachmentRepository.message(id: request.messageId, on: conn) else { return unknown }
            if let explodesAt = message.expiresAtMs, explodesAt <= WallClock.nowMs() { return unknown }
            guard let identity = try? processor.openKeystore().identity(inboxId: message.inboxId) else { return unknown }
            processor.contentKeys.remember(identity)
            guard let content = try ServedAttachmentRepository.content(of: message, on: conn),
                  case .attachment(let opened)? = try? MessageContent.decode(contentType: ContentType.attachment, content: content, fallback: nil),
                  Hex.encode(opened.id) == request.attachmentId else { return unknown }
            reference = opened
            conversationId = message.conversationId
        } catch .busy {
            return .refused(.busy, "the database is busy")
        } catch {
            return .refused(.busy, "the database: \(error)")
        }
        let path = processor.group.storedAttachmentPath(conversationId: conversationId, messageId: request.messageId)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return unknown }  // not whole here (yet), or deleted
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, Int(status.st_size) == reference.length else {
            close(fd)
            return .refused(.unknownAttachment, "the stored file is not the reference's length")
        }
        return .found(Found(fd: fd, length: reference.length))
    }

    // MARK: Sending

    private func send(piece index: Int, of file: Found, to fd: Int32) -> Bool {
        let range = AttachmentPieces.range(index, storedLength: file.length)
        var offset = off_t(range.lowerBound)
        var left = range.count
        while left > 0 {
            let n = sendfile(fd, file.fd, &offset, left)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }  // the fetcher went away or stalled past SO_SNDTIMEO
            left -= n
        }
        return true
    }

    private func refuse(_ refusal: AttachmentFetchExchange.Refusal, on fd: Int32, _ why: String) {
        WorkerLog.info("attachment fetch refused: \(refusal.rawValue) (\(why))")
        _ = UnixSocket.sendAll(fd, refusal.line)
    }
}
