import ControlProtocol
import Foundation

/// One client of the control socket. `send` is safe from any thread (a subscription's
/// events and replies interleave line by line, never mid-line) and never blocks: it writes
/// what the socket takes and queues the rest for the server's loop, up to
/// `maxPendingOutputBytes`; a client further behind is disconnected (`send` returns false).
///
/// ```swift
/// guard connection.send(JSONRPC.notificationLine(method: "change", params: params)) else { return }
/// ```
final class ControlConnection: @unchecked Sendable {
    let fd: Int32
    /// The order in which the server accepted it (the oldest idle one is evicted first).
    let serial: UInt64

    // Output, shared with every sending thread: under `lock`.
    private let lock = NSLock()
    private var output: [UInt8] = []
    private var outputStart = 0
    private var closed = false
    private let maxPendingOutputBytes: Int
    private let onOutputQueued: @Sendable (ControlConnection) -> Void

    // Input and request state: only the server's loop thread touches these.
    /// Bytes received after the last LF.
    var input: [UInt8] = []
    /// Skipping the rest of an over-long line up to its LF.
    var discarding = false
    /// A request is being handled; its successor waits (one at a time, in order).
    var busy = false
    /// The client shut down its side; close once every request was answered.
    var inputEnded = false
    /// It completed a request (a CLI mid-session, a `watch` subscriber): never evicted.
    var known = false
    /// The part of `input` counted against the shared budget.
    var chargedBytes = 0
    /// `input` before this offset holds no LF (each byte is searched once).
    private var searchedUpTo = 0

    /// The index of the first LF in `input`, if any.
    func newlineInInput() -> Int? {
        guard searchedUpTo < input.count else { return nil }
        let found = input.withUnsafeBytes { buffer -> Int? in
            guard let hit = memchr(buffer.baseAddress! + searchedUpTo, 0x0a, buffer.count - searchedUpTo) else { return nil }
            return buffer.baseAddress!.distance(to: UnsafeRawPointer(hit))
        }
        searchedUpTo = found ?? input.count
        return found
    }

    /// Drops the first line (up to and including the LF at `newline`) from `input`.
    func removeLine(through newline: Int) -> [UInt8] {
        let line = Array(input[..<newline])
        input.removeSubrange(...newline)
        searchedUpTo = 0
        return line
    }

    func clearInput() {
        input = []
        searchedUpTo = 0
    }

    init(fd: Int32, serial: UInt64, maxPendingOutputBytes: Int,
         onOutputQueued: @escaping @Sendable (ControlConnection) -> Void) {
        self.fd = fd
        self.serial = serial
        self.maxPendingOutputBytes = maxPendingOutputBytes
        self.onOutputQueued = onOutputQueued
    }

    /// Queues `line` (writing at once what the socket takes). False when the connection is
    /// closed or the client stopped reading (it is then closed by the server).
    @discardableResult
    func send(_ line: String) -> Bool {
        lock.lock()
        guard !closed else {
            lock.unlock()
            return false
        }
        if output.count - outputStart > maxPendingOutputBytes {
            lock.unlock()
            onOutputQueued(self)  // the loop sees the backlog and closes it
            return false
        }
        let wasEmpty = output.count == outputStart
        output.append(contentsOf: line.utf8)
        let writable = wasEmpty ? writeLocked() : true
        let pending = output.count > outputStart
        lock.unlock()
        if !writable || (wasEmpty && pending) { onOutputQueued(self) }
        return writable
    }

    private var requestFinished = false

    /// From the task that answered a request: the loop may start the next one.
    func noteRequestFinished() {
        lock.lock()
        requestFinished = true
        lock.unlock()
    }

    /// True once after `noteRequestFinished` (the loop thread).
    func takeRequestFinished() -> Bool {
        lock.lock()
        defer {
            requestFinished = false
            lock.unlock()
        }
        return requestFinished
    }

    /// Bytes queued and not yet written.
    var pendingOutputBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return output.count - outputStart
    }

    var isOverflowing: Bool { pendingOutputBytes > maxPendingOutputBytes }

    /// Writes what the socket takes; false when the peer is gone (or the connection closed).
    func flush() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return !closed && writeLocked()
    }

    /// Closes the socket (the server's loop only): later sends return false.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        output = []
        outputStart = 0
        Glibc.close(fd)
    }

    var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    private func writeLocked() -> Bool {
        while outputStart < output.count {
            let n = output.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + outputStart, buffer.count - outputStart, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n < 0 {
                if errno == EINTR { continue }
                guard errno == EAGAIN || errno == EWOULDBLOCK else { return false }
                if outputStart >= 64 * 1024 {  // what was written is not kept
                    output.removeFirst(outputStart)
                    outputStart = 0
                }
                return true
            }
            outputStart += n
        }
        if outputStart > 0 {
            output.removeAll(keepingCapacity: output.count <= 64 * 1024)
            outputStart = 0
        }
        return true
    }
}
