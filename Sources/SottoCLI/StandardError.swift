import Glibc

/// What the CLI says on standard error: one line, written whole.
///
/// ```swift
/// StandardError.line("sotto: the daemon is not running")
/// ```
enum StandardError {
    static func line(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
