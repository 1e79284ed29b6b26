import ControlProtocol
import Foundation
import NIOCore
import NIOPosix
import SottoWire
import Synchronization

/// The daemon's control socket (`$XDG_RUNTIME_DIR/sotto/control.sock`, mode 0600), served
/// by SwiftNIO on one event-loop thread (docs/adr/0025): accepts CLI clients, checks each
/// peer's uid with `SO_PEERCRED`, and serves JSON-RPC lines through `ControlChannelHandler`.
/// Everything it holds is bounded by `ControlLimits` (docs/adr/0010): past a bound it
/// answers `-32003 daemon busy` and closes, and it never dies of EMFILE.
///
/// ```swift
/// let server = try ControlServer.listen(path: runtime.controlSocketPath, limits: limits,
///                                       stats: stats, handler: dispatcher)
/// try await server.start()
/// …
/// await server.stop()   // stop accepting, answer what is in flight, close
/// ```
public final class ControlServer: Sendable {
    public let path: String
    public let limits: ControlLimits
    public let stats: ControlStats
    private let listenFD: Int32
    private let handler: any ControlRequestHandler
    private let group: MultiThreadedEventLoopGroup
    /// Every channel of the server lives on this one loop, so the registry needs no lock.
    private let eventLoop: any EventLoop
    private let registry: NIOLoopBoundBox<ControlConnectionRegistry>
    private let state = Mutex(State.bound)

    /// Who owns the listening socket.
    private enum State {
        /// `listen` bound it; nobody serves it yet.
        case bound
        /// NIO took it (and closes it with the channel); nil if taking it failed.
        case serving((any Channel)?)
        case stopped
    }

    /// How long `stop` lets connections finish their request before closing them anyway.

    public enum Failure: Error, CustomStringConvertible {
        case socket(String)
        public var description: String { if case .socket(let text) = self { return text }; return "" }
    }

    // MARK: - Lifecycle

    /// Binds the socket (replacing a stale one: the daemon holds the instance lock) and
    /// listens; clients queue in the backlog until `start`.
    public static func listen(path: String, limits: ControlLimits, stats: ControlStats = ControlStats(),
                       handler: any ControlRequestHandler) throws -> ControlServer {
        let fd = UnixSocket.bind(path, type: UnixSocket.streamType)
        guard fd >= 0 else { throw Failure.socket("bind \(path): \(String(cString: strerror(errno)))") }
        guard Glibc.listen(fd, SOMAXCONN) == 0 else {
            let code = errno
            close(fd)
            throw Failure.socket("listen \(path): \(String(cString: strerror(code)))")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return ControlServer(path: path, listenFD: fd, limits: limits, stats: stats, handler: handler)
    }

    private init(path: String, listenFD: Int32, limits: ControlLimits, stats: ControlStats,
                 handler: any ControlRequestHandler) {
        self.path = path
        self.listenFD = listenFD
        self.limits = limits
        self.stats = stats
        self.handler = handler
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.eventLoop = group.next()
        self.registry = NIOLoopBoundBox.makeBoxSendingValue(ControlConnectionRegistry(limits: limits, stats: stats),
                                                           eventLoop: eventLoop)
    }

    /// Starts serving the bound socket. Once only.
    public func start() async throws {
        let first = state.withLock { state in
            guard case .bound = state else { return false }
            state = .serving(nil)
            return true
        }
        guard first else { throw Failure.socket("the control socket at \(path) was already started or stopped") }
        let channel = try await bootstrap().withBoundSocket(listenFD).get()
        // NIO listens again with its default backlog of 128: restore the kernel's maximum
        // so that a burst of clients queues instead of timing out in `connect`.
        _ = Glibc.listen(listenFD, SOMAXCONN)
        let stoppedMeanwhile = state.withLock { state in
            guard case .serving = state else { return true }
            state = .serving(channel)
            return false
        }
        if stoppedMeanwhile { try? await channel.close() }
    }

    /// Stops accepting, lets every connection finish the request it is in and write its
    /// replies (for at most `limits.stopGraceSeconds`), closes them, and removes the socket file. The
    /// second and later calls do nothing.
    public func stop() async {
        let previous = state.withLock { state in
            defer { state = .stopped }
            return state
        }
        switch previous {
        case .stopped:
            return
        case .bound:
            close(listenFD)
        case .serving(let channel):
            try? await channel?.close()
            let registry = self.registry
            do {
                try await eventLoop.flatSubmit { registry.value.closeAll(on: registry.eventLoop) }
                    .withTimeout(.seconds(limits.stopGraceSeconds), on: eventLoop).get()
            } catch {
                try? await eventLoop.submit { for connection in registry.value.openConnections { connection.close() } }.get()
            }
        }
        try? await group.shutdownGracefully()
        unlink(path)
    }

    // MARK: - NIO

    private func bootstrap() -> ServerBootstrap {
        let (registry, handler, listenFD, limits) = (self.registry, self.handler, self.listenFD, self.limits)
        return ServerBootstrap(group: eventLoop)
            .serverChannelOption(.maxMessagesPerRead, value: 64)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture(withResultOf: {
                    try channel.pipeline.syncOperations.addHandlers(
                        ControlAcceptGuard(listenFD: listenFD, registry: registry.value),
                        AcceptBackoffHandler(shouldForwardIOErrorCaught: false) { _ in ControlAcceptGuard.acceptBackoff })
                })
            }
            // Reads of 64 B…64 KB (NIO's adaptive default), at most 4 per wake-up.
            .childChannelOption(.autoRead, value: false)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: limits.pauseReadingAboveOutputBytes / 2,
                                                                    high: limits.pauseReadingAboveOutputBytes + 1))
            .childChannelInitializer { channel in
                Self.peerUID(of: channel).flatMapThrowing { uid in
                    try Self.admit(channel, peerUID: uid, registry: registry.value, handler: handler)
                }
            }
    }

    /// Serves `channel` or refuses it with a line: another user's client, or no room.
    private static func admit(_ channel: any Channel, peerUID: uid_t?, registry: ControlConnectionRegistry,
                              handler: any ControlRequestHandler) throws {
        let pipeline = channel.pipeline.syncOperations
        guard peerUID == geteuid() else {
            registry.noteRefused()
            try pipeline.addHandler(ControlRefusalHandler(.refused("permission denied: peer is another user")))
            return
        }
        if case .refuse(let error) = registry.admit() {
            registry.noteRefused()
            try pipeline.addHandler(ControlRefusalHandler(error))
            return
        }
        let connection = ControlConnection(channel: channel, serial: registry.makeSerial(),
                                           maxPendingOutputBytes: registry.limits.maxPendingOutputBytes)
        let channelHandler = ControlChannelHandler(connection: connection, registry: registry, handler: handler)
        try pipeline.addHandler(channelHandler)
        let context = try pipeline.context(handler: channelHandler)
        registry.register(connection) { channelHandler.stop(context: context) }
    }

    /// The uid of the process at the other end (`SO_PEERCRED`); nil when it cannot be read.
    private static func peerUID(of channel: any Channel) -> EventLoopFuture<uid_t?> {
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
        let credentials: EventLoopFuture<UnixSocket.PeerCredentials> =
            provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.map { Optional($0.uid) }.recover { _ in nil }
    }
}

/// What answers control requests: the daemon's method dispatcher.
public protocol ControlRequestHandler: Sendable {
    /// Returns the full response line (result or error) for `request`.
    func handle(_ request: JSONRPC.Request, on connection: ControlConnection) async -> String
    func connectionClosed(_ connection: ControlConnection)
}

private struct TimedOut: Error {}

extension EventLoopFuture where Value == Void {
    /// This future, or a failure after `timeout`.
    fileprivate func withTimeout(_ timeout: TimeAmount, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let timer = eventLoop.scheduleTask(in: timeout) { promise.fail(TimedOut()) }
        whenComplete { result in
            timer.cancel()
            promise.completeWith(result)
        }
        return promise.futureResult
    }
}
