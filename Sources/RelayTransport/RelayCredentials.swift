import Glibc

/// How a device authenticates to its relay: nothing, a user and password, or a NATS `.creds`
/// file (a user JWT and its nkey seed). Read from the environment the daemon and sotto-relayd
/// share: `SOTTO_RELAY_CREDS=/path/user.creds`, or `SOTTO_RELAY_USER` + `SOTTO_RELAY_PASSWORD`.
/// Checked before any connection is made, so a mistake is a clear error and exit status 78,
/// not a relay that refuses us forever.
///
/// ```swift
/// let credentials = try RelayCredentials.from(environment: ["SOTTO_RELAY_CREDS": "/home/me/relay.creds"])
/// ```
public enum RelayCredentials: Sendable, Equatable {
    case none
    case userPassword(user: String, password: String)
    /// A `.creds` file, checked by `CredsFile.check` (the C client reads it again at each connect).
    case credsFile(path: String)

    public static let credsVariable = "SOTTO_RELAY_CREDS"
    public static let userVariable = "SOTTO_RELAY_USER"
    public static let passwordVariable = "SOTTO_RELAY_PASSWORD"

    public static func from(environment: [String: String]) throws(RelayError) -> RelayCredentials {
        let creds = environment[credsVariable].flatMap { $0.isEmpty ? nil : $0 }
        let user = environment[userVariable].flatMap { $0.isEmpty ? nil : $0 }
        let password = environment[passwordVariable].flatMap { $0.isEmpty ? nil : $0 }
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
