import Glibc
import SottoCrypto
import SottoWire

/// Accept=no: serve pushes from listening sockets in one thread with `poll(2)`, so a slow or
/// silent sender never holds up the others, and exit after `idleTimeoutMs` with no
/// connection. Each complete payload is handled synchronously (a push takes about a
/// millisecond; see docs/adr/0002).
///
/// ```swift
/// AcceptLoop(listeners: [3], idleTimeoutMs: 10_000, handle: { read, readBody in processor.handle(read, readBody: readBody) },
///            handleBatch: { fd, rest in PushBatchSession(…).run(startingWith: rest) },
///            serveAttachment: { fd, line in StoredAttachmentServer(…).serve(line, on: fd) }).run()
/// ```
///
/// A batch from sotto-relayd (`PushBatchSession`) is served blocking, start to end, like a
/// push's ack: it takes a few hundred milliseconds at most (≤ 256 pushes, one commit).
struct AcceptLoop {
    let listeners: [Int32]
    let idleTimeoutMs: Int64
    let maxConnections: Int
    /// A frame read (a payload, or one to refuse: too large, silent), and how to read the
    /// body a payload may name: blocking on that one connection, like a batch (a sender
    /// writes the body right after the payload).
    let handle: (PushRead, (BodyHint) -> PushConnection.BodyRead) -> PushOutcome
    /// A connection whose first line opened a batch: its fd (blocking) and the bytes read
    /// after that line. Writes the acks and half-closes.
    let handleBatch: (Int32, [UInt8]) -> Void
    /// A connection whose first line asks for a stored attachment file: its fd (blocking) and
    /// that line. Serves for a bounded time, then half-closes.
    let serveAttachment: (Int32, [UInt8]) -> Void

    init(listeners: [Int32], idleTimeoutMs: Int64, maxConnections: Int = 256,
         handle: @escaping (PushRead, (BodyHint) -> PushConnection.BodyRead) -> PushOutcome, handleBatch: @escaping (Int32, [UInt8]) -> Void,
         serveAttachment: @escaping (Int32, [UInt8]) -> Void) {
        self.listeners = listeners
        self.idleTimeoutMs = idleTimeoutMs
        self.maxConnections = maxConnections
        self.handle = handle
        self.handleBatch = handleBatch
        self.serveAttachment = serveAttachment
    }

    private struct Client {
        let fd: Int32
        var framer = PushFramer()
        /// What came after the first frame's LF (a batch's pushes, or a body); nil until an
        /// LF ended it.
        var rest: [UInt8]?
        var lastByteAtMs: Int64
        /// Acked and half-closed: only reading to drop what the sender still sends, until
        /// then (`PushConnection.drain`, without blocking the other senders).
        var drainUntilMs: Int64?
        var drained = 0
    }

    func run() {
        for fd in listeners { setNonBlocking(fd) }
        var clients: [Client] = []
        var lastActivityMs = nowMs()
        var chunk = [UInt8](repeating: 0, count: PushFrameLimits.maxPayloadBytes + 1)

        while true {
            let now = nowMs()
            if clients.isEmpty, now - lastActivityMs >= idleTimeoutMs { return }

            var pollfds: [pollfd] = []
            if clients.count < maxConnections {
                pollfds += listeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            }
            let listenerCount = pollfds.count
            pollfds += clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }

            // Wake for the nearest deadline: a client's silence timeout or the idle exit.
            var waitMs = clients.isEmpty ? idleTimeoutMs - (now - lastActivityMs) : Int64(PushConnection.silenceTimeoutMs)
            for client in clients {
                if let until = client.drainUntilMs {
                    waitMs = min(waitMs, until - now)
                } else {
                    waitMs = min(waitMs, Int64(PushConnection.silenceTimeoutMs) - (now - client.lastByteAtMs))
                }
            }
            let ready = poll(&pollfds, nfds_t(pollfds.count), Int32(max(0, min(waitMs, 60_000))))
            if ready < 0, errno != EINTR { return }
            let afterPoll = nowMs()

            // New connections.
            for index in 0..<listenerCount where pollfds[index].revents & Int16(POLLIN) != 0 {
                while clients.count < maxConnections {
                    let fd = UnixSocket.accept(pollfds[index].fd, nonBlocking: true)
                    if fd < 0 { break }
                    clients.append(Client(fd: fd, lastByteAtMs: afterPoll))
                    lastActivityMs = afterPoll
                }
            }

            // Reads, completions and timeouts; iterate over a snapshot of the polled clients.
            var remaining: [Client] = []
            let polledClients = pollfds[listenerCount...]
            var polledIndex = polledClients.startIndex
            for var client in clients {
                let revents: Int16
                if polledIndex < polledClients.endIndex, polledClients[polledIndex].fd == client.fd {
                    revents = polledClients[polledIndex].revents
                    polledIndex += 1
                } else {
                    revents = 0  // accepted in this round
                }
                if let until = client.drainUntilMs {
                    if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                        let n = chunk.withUnsafeMutableBytes { read(client.fd, $0.baseAddress, $0.count) }
                        if n > 0 {
                            client.drained += n
                        } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                            close(client.fd)
                            continue
                        }
                    }
                    if afterPoll >= until || client.drained >= PushConnection.drainLimitBytes {
                        close(client.fd)
                    } else {
                        remaining.append(client)
                    }
                    continue
                }
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let n = chunk.withUnsafeMutableBytes { read(client.fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        let used = chunk.withUnsafeBytes { client.framer.append(UnsafeRawBufferPointer(rebasing: $0[..<n]), upTo: 1) }
                        if !client.framer.frames.isEmpty { client.rest = Array(chunk[used..<n]) }
                        client.lastByteAtMs = afterPoll
                    } else if n == 0 {
                        client.framer.finish(emptyIsFrame: true)
                    } else if errno != EAGAIN && errno != EINTR {
                        close(client.fd)
                        continue
                    }
                }
                let framed = client.framer.frames.first ?? (client.framer.isOverlong ? .tooLarge : nil)
                switch framed {
                case nil where afterPoll - client.lastByteAtMs >= Int64(PushConnection.silenceTimeoutMs):
                    remaining.append(answered(client, .timeout))
                case nil:
                    remaining.append(client)
                case .payload(let payload)? where client.rest != nil && PushBatchSession.opens(payload, fd: client.fd):
                    setBlocking(client.fd)
                    handleBatch(client.fd, client.rest ?? [])
                    setNonBlocking(client.fd)
                    client.drainUntilMs = nowMs() + PushConnection.drainTimeoutMs
                    remaining.append(client)
                case .payload(let line)? where AttachmentFetchExchange.opens(line):
                    setBlocking(client.fd)
                    serveAttachment(client.fd, line)
                    setNonBlocking(client.fd)
                    client.drainUntilMs = nowMs() + PushConnection.drainTimeoutMs
                    remaining.append(client)
                case let framed?:
                    remaining.append(answered(client, framed))
                }
            }
            clients = remaining
            if ready > 0 { lastActivityMs = nowMs() }
        }
    }

    /// Handles the frame (a payload with the body it may name, or a refusal), writes its ack
    /// (blocking: one short line), half-closes, and turns the client into one that is drained
    /// until the sender closes or the drain budget is spent.
    private func answered(_ client: Client, _ read: PushRead) -> Client {
        var client = client
        setBlocking(client.fd)
        let connection = PushConnection(readFD: client.fd, writeFD: client.fd)
        let rest = client.rest
        let outcome = handle(read) { hint in connection.readBody(length: Int(hint.length), after: rest) }
        connection.writeAck(outcome.ackLine)
        connection.endAck()
        setNonBlocking(client.fd)
        client.drainUntilMs = nowMs() + PushConnection.drainTimeoutMs
        outcome.afterAck()
        return client
    }

    private func nowMs() -> Int64 { MonotonicClock.nowMs() }

    private func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    private func setBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
    }
}
