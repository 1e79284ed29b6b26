import Glibc

/// A detached POSIX thread running one closure: what a feed session's blocking read loop runs
/// on, without Foundation's `Thread` (the client links FoundationEssentials at most; docs/adr/0068).
///
/// ```swift
/// DetachedThread.start { readLoop() }
/// ```
enum DetachedThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    static func start(_ run: @escaping @Sendable () -> Void) {
        let body = Unmanaged.passRetained(Body(run)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, body)
        precondition(started == 0, "pthread_create: \(started)")
        pthread_detach(thread)
    }
}
