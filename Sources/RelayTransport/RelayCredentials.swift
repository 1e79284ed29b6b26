import Glibc

/// How a device authenticates to its relay: nothing, a user and password, a NATS `.creds`
/// file (a user JWT and its nkey seed), or the relay's scoped signing key, with which every
/// identity mints a user of its own (docs/adr/0051). Read from the environment the daemon and
/// sotto-relayd share: `SOTTO_RELAY_CREDS=/path/user.creds`, `SOTTO_RELAY_USER` +
/// `SOTTO_RELAY_PASSWORD`, or `SOTTO_RELAY_SIGNING_KEY=/path/device-signing.key`.
/// Checked before any connection is made, so a mistake is a clear error and exit status 78,
/// not a relay that refuses us forever.
///
/// ```swift
/// let credentials = try RelayCredentials.from(environment: ["SOTTO_RELAY_CREDS": "/home/me/relay.creds"])
/// ```
public enum RelayCredentials: Sendable, Equatable {
    case none
    case userPassword(user: String, password: String)
    /// A `.creds` file, checked by `CredsFile.check` and read again by each new connection
    /// (`CredsFile.load`); a connection's reconnects keep the login it was made with.
    case credsFile(path: String)
    /// The relay's scoped signing key: each connection logs in as a user of one identity
    /// (relayd: the identity's own nkey; the daemon: a fresh one per connection).
    case signingKey(RelaySigningKey)

    public static let credsVariable = "SOTTO_RELAY_CREDS"
    public static let userVariable = "SOTTO_RELAY_USER"
    public static let passwordVariable = "SOTTO_RELAY_PASSWORD"

    /// Whether every identity logs in as a user of its own whose permissions reach only its
    /// own mailbox consumer (the relay's operator made the streams; docs/adr/0051).
    public var isPerIdentity: Bool {
        if case .signingKey = self { return true }
        return false
    }

    public static func from(environment: [String: String]) throws(RelayError) -> RelayCredentials {
        let signing = environment[RelaySigningKey.variable].flatMap { $0.isEmpty ? nil : $0 }
        let creds = environment[credsVariable].flatMap { $0.isEmpty ? nil : $0 }
        let user = environment[userVariable].flatMap { $0.isEmpty ? nil : $0 }
        let password = environment[passwordVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let signing {
            guard creds == nil, user == nil, password == nil else {
                throw .malformedCredentials("set either \(RelaySigningKey.variable) or other relay credentials, not both")
            }
            return .signingKey(try RelaySigningKey.load(path: signing))
        }
        if let creds {
            guard user == nil, password == nil else {
                throw .malformedCredentials("set either \(credsVariable) or \(userVariable)/\(passwordVariable), not both")
            }
            try CredsFile.check(path: creds)
            return .credsFile(path: creds)
        }
        switch (user, password) {
        case (nil, nil): return .none
        case (let user?, let password?):
            for (name, value) in [(userVariable, user), (passwordVariable, password)] {
                guard value.utf8.count <= 1024, !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
                    throw .malformedCredentials("\(name) holds control characters or is over 1024 bytes")
                }
            }
            return .userPassword(user: user, password: password)
        case (nil, _): throw .malformedCredentials("\(passwordVariable) is set without \(userVariable)")
        case (_, nil): throw .malformedCredentials("\(userVariable) is set without \(passwordVariable)")
        }
    }
}
