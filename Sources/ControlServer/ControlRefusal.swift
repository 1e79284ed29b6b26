import ControlProtocol
import Glibc
import NIOCore
import SottoWire

/// Answers a control client that is not served with one JSON-RPC error line (`-32003 daemon
/// busy: …`, `-32002 permission denied: …`) and closes. On Linux a Unix socket closed with
/// the client's request unread still delivers our line first; the client then reads EOF
/// or a reset.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(ControlRefusalHandler(.unavailable("daemon busy: …; try again")))
/// ```
final class ControlRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let error: JSONRPC.ErrorObject

    init(_ error: JSONRPC.ErrorObject) {
        self.error = error
    }

    func channelActive(context: ChannelHandlerContext) {
        let line = context.channel.allocator.buffer(string: JSONRPC.errorLine(id: nil, error))
        let channel = context.channel
        context.writeAndFlush(NIOAny(line)).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}  // what it sent is not read

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// The last resort when the process is out of file descriptors and no idle connection can
/// be evicted: a descriptor held in reserve (`/dev/null`) is closed so that one waiting
/// client can be accepted directly from the listening socket and refused with a line, then
/// the reserve is taken again. Without it that client would wait unanswered in the backlog.
///
/// ```swift
/// var reserve = ReserveDescriptor()
/// reserve.refuseOne(from: listenFD, with: JSONRPC.errorLine(id: nil, .unavailable("daemon busy: out of file descriptors; try again")))
/// ```
struct ReserveDescriptor: ~Copyable {
    private var fd = open("/dev/null", O_RDONLY | O_CLOEXEC)

    /// True when a client was accepted and refused.
    mutating func refuseOne(from listenFD: Int32, with line: String) -> Bool {
        guard fd >= 0 else { return false }
        Glibc.close(fd)
        defer { fd = open("/dev/null", O_RDONLY | O_CLOEXEC) }
        let client = UnixSocket.accept(listenFD, nonBlocking: true)
        guard client >= 0 else { return false }
        _ = Array(line.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.close(client)
        return true
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }
}
