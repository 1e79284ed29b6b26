import Glibc

/// The strict check of a private CA file (`SOTTO_RELAY_CA`) before the C client is told to
/// trust it: an absolute path to a regular file that only its owner can write (whoever can
/// replace it can impersonate the relay), 1 byte to 1 MiB of PEM text holding at least one
/// whole `CERTIFICATE` block and no private key. OpenSSL parses the certificates themselves
/// when the connection is set up. Errors name the file, never its content.
///
/// ```swift
/// try CAFile.check(path: "/home/me/.config/sotto/relay-ca.pem")   // throws RelayError.malformedCA
/// ```
public enum CAFile {
    public static let maxBytes = 1 << 20

    static let begin = "-----BEGIN CERTIFICATE-----"
    static let end = "-----END CERTIFICATE-----"

    public static func check(path: String) throws(RelayError) {
        guard path.hasPrefix("/") else { throw .malformedCA("CA file path \(RelayURL.quote(path)) is not absolute") }
        let text = try readText(path)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { String($0).trimmingCharacters() }
        guard !lines.contains(where: { $0.hasPrefix("-----BEGIN") && $0.contains("PRIVATE KEY") }) else {
            throw .malformedCA("\(path) holds a private key; give the CA's certificate only")
        }
        // Blocks must open and close in turn: BEGIN, END, BEGIN, END…
        var open = false
        var certificates = 0
        for line in lines where line == begin || line == end {
            guard (line == begin) != open else { throw .malformedCA("\(path): a CERTIFICATE block is not closed") }
            open.toggle()
            if !open { certificates += 1 }
        }
        guard !open else { throw .malformedCA("\(path): a CERTIFICATE block is not closed") }
        guard certificates > 0 else { throw .malformedCA("\(path) holds no PEM certificate") }
    }

    private static func readText(_ path: String) throws(RelayError) -> String {
        try SettingsFile.read(path, what: "CA file", maxBytes: maxBytes, forbiddenMode: 0o022,
                              modeProblem: "writable by others", chmod: "644", fail: RelayError.malformedCA)
    }
}

extension String {
    fileprivate func trimmingCharacters() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
