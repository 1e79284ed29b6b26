import ControlProtocol
import Foundation
import NIOCore

/// Serves one control connection on the server's event loop: frames its bytes into request
/// lines, hands each request to the `ControlRequestHandler` (an async task) and writes the
/// reply, one request at a time and in order. Reading is driven by hand (`autoRead` off):
/// nothing more is read while a request is in flight, while lines wait to be handled, or
/// while the client has 256 KB of replies unread (the channel is not writable), which
/// bounds what a client can make the daemon hold.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(
///     ControlChannelHandler(connection: connection, registry: registry, handler: dispatcher))
/// ```
final class ControlChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: ControlConnection
    private let registry: ControlConnectionRegistry
    private let handler: any ControlRequestHandler
    private var decoder: ControlRequestDecoder
    /// A request is being handled; its successor waits.
    private var busy = false
    /// The client shut down its side: answer what it sent, then close.
    private var inputEnded = false
    /// The server is stopping: finish the request in flight, then close.
    private var stopping = false
    private var closing = false

    init(connection: ControlConnection, registry: ControlConnectionRegistry, handler: any ControlRequestHandler) {
        self.connection = connection
        self.registry = registry
        self.handler = handler
        self.decoder = ControlRequestDecoder(maxLineBytes: registry.limits.maxLineBytes)
    }

    // MARK: - Channel events

    func channelActive(context: ChannelHandlerContext) {
        context.read()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        decoder.append(unwrapInboundIn(data))
        pump(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readIfIdle(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        pump(context: context)
        readIfIdle(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent {
            inputEnded = true
            pump(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closing = true
        registry.remove(connection.serial)
        handler.connectionClosed(connection)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or broken pipe: the client is gone.
        context.close(promise: nil)
    }

    /// From the server's graceful stop: no new request; close once the current one is answered.
    func stop(context: ChannelHandlerContext) {
        stopping = true
        finishIfDone(context: context)
    }

    // MARK: - Requests

    /// Handles the next complete line while the connection is free for it, then checks the
    /// buffered rest against the shared budget.
    private func pump(context: ChannelHandlerContext) {
        while !busy, !closing, !stopping, context.channel.isWritable, let frame = decoder.nextFrame() {
            handle(frame, context: context)
        }
        if !busy, !closing, !stopping, inputEnded, context.channel.isWritable, let last = decoder.finish() {
            handle(last, context: context)
        }
        guard !closing else { return }
        guard registry.hold(decoder.bufferedBytes, for: connection.serial) else {
            registry.noteRefused()
            refuse(.unavailable("daemon busy: too many unfinished requests buffered; try again"), context: context)
            return
        }
        finishIfDone(context: context)
    }

    private func handle(_ frame: ControlRequestDecoder.Frame, context: ChannelHandlerContext) {
        guard case .line(let line) = frame else {
            connection.send(JSONRPC.errorLine(id: nil, .lineTooLong))
            return
        }
        if line.readableBytesView.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0d }) { return }
        switch JSONRPC.parse(Data(line.readableBytesView)) {
        case .invalid(let errorLine):
            connection.send(errorLine)
        case .request(let request):
            registry.markKnown(connection.serial)
            busy = true
            let (connection, handler) = (self.connection, self.handler)
            let this = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            Task {
                let reply = await handler.handle(request, on: connection)
                // One hop back to the loop: the reply is written there, then the next line read.
                eventLoop.execute {
                    let (handler, context) = this.value
                    if request.hasID { connection.send(reply) }
                    handler.requestFinished(context: context)
                }
            }
        }
    }

    private func requestFinished(context: ChannelHandlerContext) {
        busy = false
        pump(context: context)
        readIfIdle(context: context)
    }

    // MARK: - Reading and closing

    /// Asks for more input once everything read so far was handled.
    private func readIfIdle(context: ChannelHandlerContext) {
        guard !busy, !closing, !stopping, !inputEnded, context.channel.isWritable else { return }
        context.read()
    }

    /// Closes a connection whose client hung up (or a stopping server) once nothing is left
    /// to do for it: its replies are written first.
    private func finishIfDone(context: ChannelHandlerContext) {
        guard !closing, !busy, stopping || (inputEnded && decoder.bufferedBytes == 0) else { return }
        closing = true
        connection.closeWhenFlushed()
    }

    private func refuse(_ error: JSONRPC.ErrorObject, context: ChannelHandlerContext) {
        closing = true
        decoder = ControlRequestDecoder(maxLineBytes: decoder.maxLineBytes)
        registry.hold(0, for: connection.serial)
        connection.sendFinalLine(JSONRPC.errorLine(id: nil, error))
    }
}
