import ControlProtocol
import Foundation
import SharedStore

/// The daemon's control socket (`$XDG_RUNTIME_DIR/sotto/control.sock`, mode 0600): accepts
/// CLI clients, checks each peer's uid with `SO_PEERCRED`, and serves JSON-RPC lines.
///
/// One thread runs a `poll()` loop over every connection (non-blocking sockets); requests
/// are handled as tasks, one at a time per connection and in order. Everything it holds is
/// bounded by `ControlLimits` (docs/adr/0010): past a bound it answers `-32003 daemon busy`
/// and closes, evicting first the oldest connection that never sent a request, and it
/// never dies of EMFILE (a reserve descriptor lets it refuse, then it backs off).
///
/// ```swift
/// let server = try ControlServer.listen(path: runtime.controlSocketPath, limits: limits,
///                                       stats: stats, handler: dispatcher)
/// server.start()
/// …
/// server.stop()
/// ```
final class ControlServer: @unchecked Sendable {
    let path: String
    let limits: ControlLimits
    let stats: ControlStats
    private let listenFD: Int32
    private let handler: any ControlRequestHandler
    private let wakeReadFD: Int32
    private let wakeWriteFD: Int32

    // Shared with other threads: under `lock`.
    private let lock = NSLock()
    private var mailbox: [ControlConnection] = []
    private var stopping = false
    private var started = false
    private let finished = DispatchSemaphore(value: 0)

    // The loop thread's alone.
    private var connections: [Int32: ControlConnection] = [:]
    /// Connections in accept order, for eviction; entries that became known or closed are
    /// skipped (and dropped) when met.
    private var strangers: [ControlConnection] = []
    private var strangersStart = 0
    private var nextSerial: UInt64 = 0
    private var chargedBytes = 0
    private var reserveFD: Int32 = -1
    /// `limits.maxConnections`, lowered for good when the process ran out of descriptors:
    /// the control socket then leaves `fileLimitHeadroom` of them to the rest of the daemon.
    private var maxConnections: Int
    private var acceptPausedUntilNs: UInt64?
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    static let acceptBatch = 64
    static let fileLimitHeadroom = 64
    static let acceptBackoffNs: UInt64 = 100_000_000

    private init(path: String, listenFD: Int32, wakeFDs: (Int32, Int32), limits: ControlLimits, stats: ControlStats,
                 handler: any ControlRequestHandler) {
        self.path = path
        self.listenFD = listenFD
        (self.wakeReadFD, self.wakeWriteFD) = wakeFDs
        self.limits = limits
        self.stats = stats
        self.handler = handler
        self.maxConnections = limits.maxConnections
        stats.update { $0.maxConnections = limits.maxConnections }
    }

    enum Failure: Error, CustomStringConvertible {
        case socket(String)
        var description: String { if case .socket(let text) = self { return text }; return "" }
    }

    static func listen(path: String, limits: ControlLimits, stats: ControlStats = ControlStats(),
                       handler: any ControlRequestHandler) throws -> ControlServer {
        // A stale socket from a previous run is replaced: the daemon holds the instance lock.
        let fd = UnixSocket.bind(path, type: Int32(SOCK_STREAM.rawValue))
        guard fd >= 0 else { throw Failure.socket("bind \(path): \(String(cString: strerror(errno)))") }
        var pipeFDs: [Int32] = [-1, -1]
        guard Glibc.listen(fd, SOMAXCONN) == 0, pipe(&pipeFDs) == 0 else {
            let code = errno
            close(fd)
            throw Failure.socket("listen \(path): errno \(code)")
        }
        for descriptor in [fd] + pipeFDs {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        return ControlServer(path: path, listenFD: fd, wakeFDs: (pipeFDs[0], pipeFDs[1]), limits: limits, stats: stats,
                             handler: handler)
    }

    func start() {
        lock.lock()
        started = true
        lock.unlock()
        reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "control-loop"
        thread.start()
    }

    /// Stops accepting, closes every client connection, removes the socket file.
    func stop() {
        lock.lock()
        stopping = true
        let running = started
        lock.unlock()
        if running {
            wake()
            finished.wait()
        } else {
            shutDown()
        }
        unlink(path)
    }

    // MARK: - Loop

    private func run() {
        var pollFDs: [pollfd] = []
        var order: [ControlConnection] = []
        while true {
            guard takeMailbox() else { break }
            pollFDs.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            let now = DispatchTime.now().uptimeNanoseconds
            if let until = acceptPausedUntilNs, now >= until { acceptPausedUntilNs = nil }
            pollFDs.append(pollfd(fd: wakeReadFD, events: Int16(POLLIN), revents: 0))
            pollFDs.append(pollfd(fd: acceptPausedUntilNs == nil ? listenFD : -1, events: Int16(POLLIN), revents: 0))
            for connection in connections.values {
                var events: Int32 = 0
                if wantsInput(connection) { events |= Int32(POLLIN) }
                if connection.pendingOutputBytes > 0 { events |= Int32(POLLOUT) }
                // A busy connection sits out (even its hang-up): it is looked at again once
                // its request is answered, so a client gone mid-request cannot spin the loop.
                guard events != 0 else { continue }
                pollFDs.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
                order.append(connection)
            }
            let timeoutMs = acceptPausedUntilNs.map { Int32(clamping: ($0 - min($0, now)) / 1_000_000 + 1) } ?? -1
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), timeoutMs)
            if ready < 0 {
                if errno == EINTR { continue }
                DaemonLog.error("control socket poll failed: errno \(errno)")
                break
            }
            if pollFDs[0].revents != 0 { drainWakePipe() }
            for (index, connection) in order.enumerated() {
                let events = Int32(pollFDs[index + 2].revents)
                guard events != 0, !connection.isClosed else { continue }
                if events & Int32(POLLOUT) != 0 || events & Int32(POLLERR | POLLHUP) != 0 {
                    guard connection.flush() else {
                        closeConnection(connection)
                        continue
                    }
                }
                if events & Int32(POLLIN | POLLHUP | POLLERR) != 0 { readInput(connection) }
                processLines(connection)  // lines held back while output was backed up
                settle(connection)
            }
            if pollFDs[1].revents != 0 { acceptWaiting() }
            publishStats()
        }
        shutDown()
    }

    /// Requests from other threads: a reply sent, a request finished, a backlog to check.
    /// False once `stop()` was called.
    private func takeMailbox() -> Bool {
        lock.lock()
        let changed = mailbox
        mailbox.removeAll(keepingCapacity: true)
        let stop = stopping
        lock.unlock()
        for connection in changed where connections[connection.fd] === connection {
            if connection.takeRequestFinished() { connection.busy = false }
            if connection.isOverflowing {
                DaemonLog.warning("control client stopped reading (\(connection.pendingOutputBytes) bytes behind); disconnected")
                closeConnection(connection)
                continue
            }
            processLines(connection)
            settle(connection)
        }
        return !stop
    }

    private func post(_ connection: ControlConnection) {
        lock.lock()
        mailbox.append(connection)
        lock.unlock()
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWriteFD, &byte, 1)  // a full pipe already means "wake up"
    }

    private func drainWakePipe() {
        var bytes = [UInt8](repeating: 0, count: 512)
        while read(wakeReadFD, &bytes, bytes.count) > 0 {}
    }

    private func wantsInput(_ connection: ControlConnection) -> Bool {
        !connection.busy && !connection.inputEnded && connection.pendingOutputBytes <= limits.pauseReadingAboveOutputBytes
    }

    // MARK: - Accepting

    private func acceptWaiting() {
        for _ in 0..<Self.acceptBatch {
            let fd = UnixSocket.accept(listenFD, nonBlocking: true)
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED:
                    continue
                case EMFILE, ENFILE:
                    stats.update { $0.fileLimitHits += 1 }
                    if lowerMaxConnections() { continue }
                    refuseWithReserve()
                    return
                default:  // EAGAIN: nobody waiting
                    return
                }
            }
            guard UnixSocket.peerCredentials(fd)?.uid == geteuid() else {
                refuse(fd, .refused("permission denied: peer is another user"))
                continue
            }
            if connections.count >= maxConnections, !evictOldestStranger() {
                refuse(fd, .unavailable("daemon busy: \(connections.count) control connections open; try again"))
                continue
            }
            register(fd)
        }
    }

    private func register(_ fd: Int32) {
        nextSerial += 1
        let connection = ControlConnection(fd: fd, serial: nextSerial, maxPendingOutputBytes: limits.maxPendingOutputBytes) {
            [weak self] connection in self?.post(connection)
        }
        connections[fd] = connection
        strangers.append(connection)
        if strangers.count - strangersStart > 2 * limits.maxConnections {
            strangers = strangers[strangersStart...].filter { !$0.known && connections[$0.fd] === $0 }
            strangersStart = 0
        }
    }

    /// Closes the oldest connection that has not sent a request, with a busy line. False
    /// when every connection has (they are all in use).
    private func evictOldestStranger() -> Bool {
        while strangersStart < strangers.count {
            let candidate = strangers[strangersStart]
            strangersStart += 1
            guard !candidate.known, connections[candidate.fd] === candidate else { continue }
            compactStrangers()
            stats.update { $0.evicted += 1 }
            _ = candidate.send(JSONRPC.errorLine(id: nil, .unavailable("daemon busy: idle connection closed to make room; try again")))
            closeConnection(candidate, drain: true)
            return true
        }
        compactStrangers()
        return false
    }

    private func compactStrangers() {
        if strangersStart > 1024, strangersStart * 2 > strangers.count {
            strangers.removeFirst(strangersStart)
            strangersStart = 0
        }
    }

    /// Out of descriptors: serve fewer connections from now on, leaving the rest of the
    /// daemon (database, keystore, pushes) room, and evict idle ones down to that. False when
    /// none could be evicted.
    private func lowerMaxConnections() -> Bool {
        let lowered = max(16, connections.count - Self.fileLimitHeadroom)
        if lowered < maxConnections {
            DaemonLog.warning("out of file descriptors with \(connections.count) control connections; serving at most \(lowered)")
            maxConnections = lowered
            stats.update { $0.maxConnections = lowered }
        }
        var evicted = false
        while connections.count >= maxConnections, evictOldestStranger() { evicted = true }
        return evicted
    }

    /// Out of descriptors with nobody to evict: the reserve one takes the waiting client
    /// just long enough to refuse it; then accepting pauses a moment.
    private func refuseWithReserve() {
        if reserveFD >= 0 {
            close(reserveFD)
            let fd = UnixSocket.accept(listenFD, nonBlocking: true)
            if fd >= 0 { refuse(fd, .unavailable("daemon busy: out of file descriptors; try again")) }
            reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
        acceptPausedUntilNs = DispatchTime.now().uptimeNanoseconds + Self.acceptBackoffNs
    }

    /// Answers a connection that is not served with one error line and closes it.
    private func refuse(_ fd: Int32, _ error: JSONRPC.ErrorObject) {
        stats.update { $0.refused += 1 }
        let line = Array(JSONRPC.errorLine(id: nil, error).utf8)
        _ = line.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Self.drainAndClose(fd)
    }

    /// Reads (and drops) a little of what the client already sent, so that closing does not
    /// turn its unread request into a reset before it read our line.
    private static func drainAndClose(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
        var bytes = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<4 where recv(fd, &bytes, bytes.count, Int32(MSG_DONTWAIT)) > 0 {}
        close(fd)
    }

    // MARK: - Reading requests

    private func readInput(_ connection: ControlConnection) {
        var budget = 4 * scratch.count  // then other connections get their turn
        while budget > 0, wantsInput(connection) {
            let n = scratch.withUnsafeMutableBytes { read(connection.fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { closeConnection(connection) }
                return
            }
            if n == 0 {
                connection.inputEnded = true
                return
            }
            budget -= n
            append(scratch[0..<n], to: connection)
            processLines(connection)
            guard !connection.isClosed else { return }
            if connection.input.count > limits.maxLineBytes {
                connection.clearInput()
                connection.discarding = true
                charge(connection)
                _ = connection.send(JSONRPC.errorLine(id: nil, .lineTooLong))
            }
            if connection.chargedBytes > 0, chargedBytes > limits.sharedBufferBytes {
                stats.update { $0.refused += 1 }
                _ = connection.send(JSONRPC.errorLine(id: nil, .unavailable("daemon busy: too many unfinished requests buffered; try again")))
                closeConnection(connection, drain: true)
                return
            }
        }
    }

    private func append(_ bytes: ArraySlice<UInt8>, to connection: ControlConnection) {
        var bytes = bytes
        if connection.discarding {
            guard let newline = bytes.firstIndex(of: 0x0a) else { return }
            connection.discarding = false
            bytes = bytes[(newline + 1)...]
        }
        connection.input.append(contentsOf: bytes)
        charge(connection)
    }

    /// Keeps the shared budget's count of `connection`'s buffered bytes up to date.
    private func charge(_ connection: ControlConnection) {
        let charged = max(0, connection.input.count - limits.smallBufferBytes)
        chargedBytes += charged - connection.chargedBytes
        connection.chargedBytes = charged
        if connection.input.isEmpty, connection.input.capacity > 2 * limits.smallBufferBytes { connection.clearInput() }
    }

    /// Starts the next complete request, if the connection is free for one.
    private func processLines(_ connection: ControlConnection) {
        while !connection.busy, !connection.isClosed,
              connection.pendingOutputBytes <= limits.pauseReadingAboveOutputBytes,
              let newline = connection.newlineInInput() {
            let line = Data(connection.removeLine(through: newline))
            charge(connection)
            guard line.count <= limits.maxLineBytes else {
                connection.send(JSONRPC.errorLine(id: nil, .lineTooLong))
                continue
            }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0d }) { continue }
            switch JSONRPC.parse(line) {
            case .invalid(let errorLine):
                connection.send(errorLine)
            case .request(let request):
                connection.known = true
                connection.busy = true
                let handler = self.handler
                Task { [weak self] in
                    let reply = await handler.handle(request, on: connection)
                    if request.hasID { connection.send(reply) }
                    self?.finishRequest(connection)
                }
            }
        }
    }

    private func finishRequest(_ connection: ControlConnection) {
        // `busy` belongs to the loop thread: it is cleared there, in `takeMailbox`.
        connection.noteRequestFinished()
        post(connection)
    }

    /// Closes a connection whose client hung up once nothing is left to do for it.
    private func settle(_ connection: ControlConnection) {
        guard !connection.isClosed, connection.inputEnded, !connection.busy,
              connection.newlineInInput() == nil, connection.pendingOutputBytes == 0 else { return }
        closeConnection(connection)
    }

    private func closeConnection(_ connection: ControlConnection, drain: Bool = false) {
        guard connections[connection.fd] === connection else { return }
        connections[connection.fd] = nil
        chargedBytes -= connection.chargedBytes
        connection.chargedBytes = 0
        connection.clearInput()
        if drain {
            _ = connection.flush()
            shutdown(connection.fd, Int32(SHUT_WR))
            var bytes = [UInt8](repeating: 0, count: 16 * 1024)
            for _ in 0..<4 where recv(connection.fd, &bytes, bytes.count, Int32(MSG_DONTWAIT)) > 0 {}
        }
        connection.close()
        handler.connectionClosed(connection)
    }

    private func publishStats() {
        let open = connections.count
        let buffered = connections.values.reduce(0) { $0 + $1.input.count }
        stats.update {
            $0.connections = open
            $0.bufferedBytes = buffered
        }
    }

    private func shutDown() {
        close(listenFD)
        for connection in Array(connections.values) { closeConnection(connection) }
        if reserveFD >= 0 { close(reserveFD) }
        close(wakeReadFD)
        close(wakeWriteFD)
        publishStats()
    }
}

/// What answers control requests: the daemon's method dispatcher.
protocol ControlRequestHandler: Sendable {
    /// Returns the full response line (result or error) for `request`.
    func handle(_ request: JSONRPC.Request, on connection: ControlConnection) async -> String
    func connectionClosed(_ connection: ControlConnection)
}
