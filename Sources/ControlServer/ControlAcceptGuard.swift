import ControlProtocol
import Glibc
import NIOCore

/// On the listening channel, ahead of NIO's `AcceptBackoffHandler`: when `accept` fails for
/// want of file descriptors (EMFILE/ENFILE) the control socket serves fewer connections from
/// then on and evicts idle ones down to that (`ControlConnectionRegistry.lowerMaxConnections`);
/// with nobody to evict, one waiting client is refused with a line through the reserve
/// descriptor. The backoff handler then pauses accepting for `acceptBackoff`.
///
/// ```swift
/// try serverChannel.pipeline.syncOperations.addHandlers(
///     ControlAcceptGuard(listenFD: fd, registry: registry),
///     AcceptBackoffHandler(shouldForwardIOErrorCaught: false) { _ in ControlAcceptGuard.acceptBackoff })
/// ```
final class ControlAcceptGuard: ChannelInboundHandler {
    typealias InboundIn = any Channel

    /// How long accepting pauses after the process ran out of descriptors.
    static let acceptBackoff = TimeAmount.milliseconds(100)

    private let listenFD: Int32
    private let registry: ControlConnectionRegistry
    private var reserve = ReserveDescriptor()

    init(listenFD: Int32, registry: ControlConnectionRegistry) {
        self.listenFD = listenFD
        self.registry = registry
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE {
            registry.stats.update { $0.fileLimitHits += 1 }
            if !registry.lowerMaxConnections(),
               reserve.refuseOne(from: listenFD, with: JSONRPC.errorLine(
                   id: nil, .unavailable("daemon busy: out of file descriptors; try again"))) {
                registry.noteRefused()
            }
        }
        context.fireErrorCaught(error)
    }
}
