/// Which relay a device uses and how it logs in, read from the same environment as the daemon:
/// `SOTTO_RELAY=nats://HOST:PORT` (or `tls://`), plus the credentials of `RelayCredentials`.
///
/// ```swift
/// guard let config = try RelayConfiguration.from(environment: env) else { /* no relay configured */ }
/// let relay = try RelayConnection.connect(config)
/// ```
public struct RelayConfiguration: Sendable, Equatable {
    public static let relayVariable = "SOTTO_RELAY"

    public var url: RelayURL
    public var credentials: RelayCredentials

    public init(url: RelayURL, credentials: RelayCredentials = .none) {
        self.url = url
        self.credentials = credentials
    }

    /// nil when `SOTTO_RELAY` is unset or empty; throws on a malformed URL or credentials.
    public static func from(environment: [String: String]) throws(RelayError) -> RelayConfiguration? {
        guard let text = environment[relayVariable], !text.isEmpty else { return nil }
        return RelayConfiguration(url: try RelayURL.parse(text),
                                  credentials: try RelayCredentials.from(environment: environment))
    }
}
