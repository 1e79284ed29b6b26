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
        server.start()
        try? await gracefulShutdown()  // thrown only when cancelled: stop either way
        server.stop()  // joins the server's poll thread: a few ms, once, at shutdown
    }
}
