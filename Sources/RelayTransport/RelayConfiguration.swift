/// Which relay a device uses and how it logs in, read from the same environment as the daemon:
/// `SOTTO_RELAY=nats://HOST:PORT` (or `tls://`), plus the credentials of `RelayCredentials`,
/// plus, for a `tls://` relay whose certificate comes from a private CA, `SOTTO_RELAY_CA`
/// (a PEM file checked by `CAFile`, trusted in addition to the system's CAs).
///
/// ```swift
/// guard let config = try RelayConfiguration.from(environment: env) else { /* no relay configured */ }
/// let relay = try RelayConnection.connect(config)
/// ```
public struct RelayConfiguration: Sendable, Equatable {
    public static let relayVariable = "SOTTO_RELAY"
    public static let caVariable = "SOTTO_RELAY_CA"

    public var url: RelayURL
    public var credentials: RelayCredentials
    /// More CA certificates a `tls://` relay's certificate may chain to (added to the system's).
    public var caFile: String?

    public init(url: RelayURL, credentials: RelayCredentials = .none, caFile: String? = nil) {
        self.url = url
        self.credentials = credentials
        self.caFile = caFile
    }

    /// nil when `SOTTO_RELAY` is unset or empty; throws on a malformed URL or credentials.
    public static func from(environment: [String: String]) throws(RelayError) -> RelayConfiguration? {
        guard let text = environment[relayVariable], !text.isEmpty else { return nil }
        let url = try RelayURL.parse(text)
        let credentials = try RelayCredentials.from(environment: environment)
        guard let caFile = environment[caVariable], !caFile.isEmpty else {
            return RelayConfiguration(url: url, credentials: credentials)
        }
        guard url.isTLS else { throw .malformedCA("\(caVariable) is set but the relay \(url) is not tls://") }
        try CAFile.check(path: caFile)
        return RelayConfiguration(url: url, credentials: credentials, caFile: caFile)
    }
}
