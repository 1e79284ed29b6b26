import ControlServer
import ServiceLifecycle

/// The control socket as a part of the daemon: the server was bound at start-up (so READY=1
/// means a client can connect); this serves it until a graceful shutdown, then stops
/// accepting and closes every client. The only place that starts and stops the control
/// server: a different implementation swaps in here.
///
/// ```swift
/// let control = ControlServerService(server: try ControlServer.listen(path: path, limits: limits, handler: dispatcher))
/// ```
struct ControlServerService: Service {
    let server: ControlServer

    func run() async throws {
        do {
            try await server.start()
        } catch {
            await server.stop()
            throw error
        }
        try? await gracefulShutdown()  // thrown only when cancelled: stop either way
        await server.stop()  // answers the requests in flight (at most ControlLimits.stopGraceSeconds)
    }
}
