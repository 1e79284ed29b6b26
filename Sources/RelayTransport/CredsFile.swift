import Glibc

/// The strict check of a NATS `.creds` file before the C client is given its path: a regular
/// file, private to its owner (it holds a secret seed), at most 64 KiB, with exactly one
/// `NATS USER JWT` block holding a three-part base64url token and one `USER NKEY SEED` block
/// holding a user seed (`SU…`, 58 base32 characters). Errors never quote the file's content.
///
/// ```swift
/// try CredsFile.check(path: "/home/me/.config/sotto/relay.creds")   // throws RelayError.malformedCredentials
/// ```
public enum CredsFile {
    public static let maxBytes = 65_536

    public static func check(path: String) throws(RelayError) {
        guard path.hasPrefix("/") else { throw .malformedCredentials("credentials file path \(RelayURL.quote(path)) is not absolute") }
        let text = try readText(path)
        guard let jwt = block(in: text, begin: "-----BEGIN NATS USER JWT-----", end: "------END NATS USER JWT------") else {
            throw .malformedCredentials("\(path) has no single NATS USER JWT block")
        }
        guard isJWT(jwt) else { throw .malformedCredentials("\(path): the user JWT is not a three-part base64url token") }
        guard let seed = block(in: text, begin: "-----BEGIN USER NKEY SEED-----", end: "------END USER NKEY SEED------") else {
            throw .malformedCredentials("\(path) has no single USER NKEY SEED block")
        }
        guard seed.utf8.count == 58, seed.hasPrefix("SU"),
              seed.utf8.allSatisfy({ (0x41...0x5a).contains($0) || (0x32...0x37).contains($0) }) else {
            throw .malformedCredentials("\(path): the nkey seed is not a user seed (SU…, 58 base32 characters)")
        }
    }

    // MARK: - Reading

    private static func readText(_ path: String) throws(RelayError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .malformedCredentials("cannot read credentials file \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .malformedCredentials("\(path) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw .malformedCredentials("\(path) is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard info.st_size > 0, info.st_size <= maxBytes else {
            throw .malformedCredentials("\(path) is \(info.st_size) bytes; expected 1 to \(maxBytes)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .malformedCredentials("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: maxBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw .malformedCredentials("cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        guard count <= maxBytes, let text = String(validating: bytes[0..<count], as: UTF8.self) else {
            throw .malformedCredentials("\(path) is not UTF-8 text of at most \(maxBytes) bytes")
        }
        return text
    }

    /// The one non-empty line between `begin` and `end`; nil when either marker is missing,
    /// repeated, or the block holds anything but one line.
    private static func block(in text: String, begin: String, end: String) -> String? {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingSpaces() }
        guard lines.filter({ $0 == begin }).count == 1, lines.filter({ $0 == end }).count == 1,
              let start = lines.firstIndex(of: begin), let stop = lines.firstIndex(of: end), stop > start
        else { return nil }
        let inside = lines[(start + 1)..<stop].filter { !$0.isEmpty }
        return inside.count == 1 ? inside[0] : nil
    }

    private static func isJWT(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts.allSatisfy { part in
            !part.isEmpty && part.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0)
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "=")
            }
        }
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
