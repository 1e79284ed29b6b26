import Glibc

/// A detached thread that lives as long as the process, for relayd's blocking loops beside
/// the main one (the ack thread, the stop-signal wait).
///
/// ```swift
/// ProcessThread.start { pipeline.run() }   // never joined
/// ```
enum ProcessThread {
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func start(_ run: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(run)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, box)
        pthread_detach(thread)
    }
}
