import DaemonLogging
import NIOCore
import Synchronization

/// One client of the control socket, as the rest of the daemon sees it: a sink for whole
/// lines. `send` is safe from any task or thread (a subscription's `change` notifications
/// and the replies interleave line by line, never mid-line) and never blocks; the server's
/// event loop writes each line in the order it was sent. A client that stops reading is
/// disconnected once `maxPendingOutputBytes` wait for it, and `send` then returns false, so
/// the change feed drops it.
///
/// ```swift
/// guard connection.send(JSONRPC.notificationLine(method: "change", params: params)) else { return }
/// ```
public final class ControlConnection: Sendable {
    /// The order in which the server accepted it (the oldest idle one is evicted first).
    public let serial: UInt64
    private let channel: any Channel
    private let maxPendingOutputBytes: Int
    /// Bytes handed to the channel and not yet written to the socket.
    private let pending = Atomic<Int>(0)

    init(channel: any Channel, serial: UInt64, maxPendingOutputBytes: Int) {
        self.channel = channel
        self.serial = serial
        self.maxPendingOutputBytes = maxPendingOutputBytes
    }

    // MARK: - Sending

    /// Queues `line` for the client. False when the connection is closed, or when the client
    /// stopped reading and is more than `maxPendingOutputBytes` behind (it is then closed).
    @discardableResult
    public func send(_ line: String) -> Bool {
        guard channel.isActive else { return false }
        guard pendingOutputBytes <= maxPendingOutputBytes else {
            DaemonLog.warning("control client stopped reading (\(pendingOutputBytes) bytes behind); disconnected")
            channel.close(promise: nil)
            return false
        }
        let buffer = channel.allocator.buffer(string: line)
        let count = buffer.readableBytes
        pending.add(count, ordering: .relaxed)
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in self.pending.subtract(count, ordering: .relaxed) }
        channel.writeAndFlush(buffer, promise: written)
        return true
    }

    /// Queues `line` (its bytes, LF included) like `send` and returns a wait for it to be
    /// written to the socket (lines are
    /// written in order, so every line sent before it is too); false when the connection
    /// closed first. A streaming answer (`saveAttachment`) awaits its lines a few behind,
    /// so that a slow client slows the daemon down instead of making it hold the stream.
    ///
    /// ```swift
    /// let written = connection.sendAwaitingWrite(bytes: line)   // start it …
    /// guard await written() else { return }                     // … and wait for it later
    /// ```
    public func sendAwaitingWrite(bytes line: [UInt8]) -> @Sendable () async -> Bool {
        guard channel.isActive else { return { false } }
        return write(channel.allocator.buffer(bytes: line))
    }

    private func write(_ buffer: ByteBuffer) -> @Sendable () async -> Bool {
        let count = buffer.readableBytes
        pending.add(count, ordering: .relaxed)
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in self.pending.subtract(count, ordering: .relaxed) }
        channel.writeAndFlush(buffer, promise: written)
        let future = written.futureResult
        return {
            do {
                try await future.get()
                return true
            } catch {
                return false
            }
        }
    }

    /// Bytes queued and not yet written to the socket.
    public var pendingOutputBytes: Int { pending.load(ordering: .relaxed) }

    public var isClosed: Bool { !channel.isActive }

    // MARK: - Closing

    /// Writes `line` (a refusal) and closes once it is out.
    func sendFinalLine(_ line: String) {
        send(line)
        closeWhenFlushed()
    }

    /// Closes after every line queued so far has been written (writes complete in order).
    func closeWhenFlushed() {
        let channel = self.channel
        channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Closes now, dropping what was not written yet.
    func close() {
        channel.close(promise: nil)
    }
}
