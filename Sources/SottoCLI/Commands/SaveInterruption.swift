import Glibc

/// Removes `sotto save`'s temporary file when the command is interrupted (Ctrl-C, a SIGTERM, a
/// closed terminal) before it named the file: the signal handler unlinks the one path armed,
/// then lets the signal end the process as it would have. Async-signal-safe: the path is a C
/// string made before the handler can run, and the handler calls only `unlink`, `signal` and
/// `raise`.
///
/// ```swift
/// SaveInterruption.arm(file.temporaryPath)
/// defer { SaveInterruption.disarm() }
/// ```
enum SaveInterruption {
    nonisolated(unsafe) private static var armed: UnsafeMutablePointer<CChar>?
    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    static func arm(_ path: String) {
        armed = strdup(path)
        for number in signals {
            signal(number) { received in
                if let path = SaveInterruption.armed { unlink(path) }
                signal(received, SIG_DFL)
                raise(received)
            }
        }
    }

    static func disarm() {
        for number in signals { signal(number, SIG_DFL) }
        let path = armed
        armed = nil
        free(path)
    }
}
