import Glibc

/// Reads a small settings file that a relay setting names (a `.creds` file, a CA bundle) the
/// strict way both share: a regular file, none of `forbiddenMode`'s permission bits set,
/// 1 byte to `maxBytes` of UTF-8 text. Each failure is one `fail(message)`; messages name the
/// file, never its content.
///
/// ```swift
/// let text = try SettingsFile.read("/home/me/.config/sotto/relay.creds", what: "credentials file",
///                                  maxBytes: 65_536, forbiddenMode: 0o077, modeProblem: "readable by others",
///                                  chmod: "600", fail: RelayError.malformedCredentials)
/// ```
enum SettingsFile {
    static func read(_ path: String, what: String, maxBytes: Int, forbiddenMode: mode_t, modeProblem: String,
                     chmod: String, fail: (String) -> RelayError) throws(RelayError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw fail("cannot read \(what) \(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw fail("\(path) is not a regular file") }
        guard info.st_mode & forbiddenMode == 0 else {
            throw fail("\(path) is \(modeProblem) (mode \(String(info.st_mode & 0o777, radix: 8))); chmod \(chmod) it")
        }
        guard info.st_size > 0, info.st_size <= maxBytes else {
            throw fail("\(path) is \(info.st_size) bytes; expected 1 to \(maxBytes)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw fail("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw fail("cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        guard count <= maxBytes, let text = String(validating: bytes[0..<count], as: UTF8.self) else {
            throw fail("\(path) is not UTF-8 text of at most \(maxBytes) bytes")
        }
        return text
    }
}
