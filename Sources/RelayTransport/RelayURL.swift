import SottoWire

/// A relay address: `nats://HOST:PORT` (plain) or `tls://HOST:PORT` (TLS through OpenSSL).
/// Parsed strictly, because it comes from the environment, a config file or an invite: no
/// user info (credentials are separate options and never travel in an invite), no path, no
/// query, a port in 1…65535, a host of letters, digits, `-` and `.` (or `[IPv6]`).
///
/// ```swift
/// let url = try RelayURL.parse("tls://relay.example.org:4222")
/// url.isTLS        // true
/// url.clientURL    // "tls://relay.example.org:4222", what the C client is given
/// ```
public struct RelayURL: Sendable, Equatable, CustomStringConvertible {
    public let isTLS: Bool
    public let host: String
    public let port: Int

    public var description: String { (isTLS ? "tls://" : "nats://") + host + ":" + String(port) }
    /// The same text: the endpoint a device puts in its invites.
    public var endpoint: String { description }
    public var clientURL: String { description }

    public static func parse(_ text: String) throws(RelayError) -> RelayURL {
        guard !text.isEmpty else { throw .malformedURL("empty; expected nats://HOST:PORT or tls://HOST:PORT") }
        guard text.utf8.count <= 512 else { throw .malformedURL("longer than 512 bytes") }
        let isTLS: Bool
        let rest: Substring
        if text.hasPrefix("nats://") {
            isTLS = false
            rest = text.dropFirst("nats://".count)
        } else if text.hasPrefix("tls://") {
            isTLS = true
            rest = text.dropFirst("tls://".count)
        } else {
            throw .malformedURL("\(Self.quote(text)) does not start with nats:// or tls://")
        }
        guard let (host, port) = ProtocolIds.relayHostPort(rest) else {
            throw .malformedURL("\(Self.quote(text)) is not nats://HOST:PORT or tls://HOST:PORT "
                                + "(a host name or address, a port 1-65535, nothing else)")
        }
        return RelayURL(isTLS: isTLS, host: host, port: port)
    }

    /// Shown in errors: user info (`user:password@`, which a URL here must not carry) replaced
    /// by `…@` so a password never reaches a log, control characters escaped, at most 80 characters.
    static func quote(_ text: String) -> String {
        var text = text
        for scheme in ["nats://", "tls://"] where text.hasPrefix(scheme) {
            let authority = text.index(text.startIndex, offsetBy: scheme.count)
            if let at = text[authority...].lastIndex(of: "@") { text.replaceSubrange(authority..<at, with: "…") }
        }
        var out = "\""
        for scalar in text.unicodeScalars.prefix(80) {
            out += scalar.value < 0x20 || scalar.value == 0x7f ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return out + (text.unicodeScalars.count > 80 ? "…\"" : "\"")
    }
}
