import Glibc

/// The strict check of a NATS `.creds` file before the C client is given its path: a regular
/// file, private to its owner (it holds a secret seed), at most 64 KiB, with exactly one
/// `NATS USER JWT` block holding a three-part base64url token and one `USER NKEY SEED` block
/// holding a user seed (`SU…`, 58 base32 characters). Errors never quote the file's content.
///
/// ```swift
/// try CredsFile.check(path: "/home/me/.config/sotto/relay.creds")   // throws RelayError.malformedCredentials
/// let (jwt, user) = try CredsFile.load(path: path)                  // what the connection logs in with
/// ```
public enum CredsFile {
    public static let maxBytes = 65_536

    public static func check(path: String) throws(RelayError) {
        _ = try load(path: path)
    }

    /// The user JWT and the user's nkey, after the checks of `check`.
    public static func load(path: String) throws(RelayError) -> (jwt: String, user: Nkey) {
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
        do throws(RelayError) {
            return (jwt, try Nkey(seed: seed, kind: .user))
        } catch {
            throw .malformedCredentials("\(path): the nkey seed's checksum or kind is wrong")
        }
    }

    // MARK: - Reading

    private static func readText(_ path: String) throws(RelayError) -> String {
        try SettingsFile.read(path, what: "credentials file", maxBytes: maxBytes, forbiddenMode: 0o077,
                              modeProblem: "readable by others", chmod: "600", fail: RelayError.malformedCredentials)
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
