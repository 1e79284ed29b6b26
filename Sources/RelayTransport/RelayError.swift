import CNats

/// What went wrong at the relay boundary: input this device was given (a malformed relay URL
/// or credentials file: exit `EX_CONFIG`) or a call into the relay that failed (retry later).
///
/// ```swift
/// do { _ = try RelayURL.parse("nats://relay.example:4222") }
/// catch let error as RelayError { print(error) }   // "malformed relay URL: …"
/// ```
public enum RelayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `SOTTO_RELAY` (or `--relay`) is not `nats://HOST:PORT` or `tls://HOST:PORT`.
    case malformedURL(String)
    /// A credentials option or file that cannot be used as it is.
    case malformedCredentials(String)
    /// `SOTTO_RELAY_CA` that cannot be used as the relay's trusted CA file.
    case malformedCA(String)
    /// The relay (or the client library) refused or failed a call: `operation` names what
    /// was being done, `status` is the C client's text, `code` JetStream's error code (0 if none).
    case call(operation: String, status: String, code: Int)

    public var description: String {
        switch self {
        case .malformedURL(let why): return "malformed relay URL: \(why)"
        case .malformedCredentials(let why): return "malformed relay credentials: \(why)"
        case .malformedCA(let why): return "malformed relay CA file: \(why)"
        case .call(let operation, let status, let code):
            return code == 0 ? "\(operation): \(status)" : "\(operation): \(status) (JetStream error \(code))"
        }
    }

    /// Whether this is bad configuration (the process should exit `EX_CONFIG`, 78) rather than
    /// a relay that may answer later.
    public var isConfiguration: Bool {
        switch self {
        case .malformedURL, .malformedCredentials, .malformedCA: return true
        case .call: return false
        }
    }

    /// The exit status for a process that stops on this error.
    public static let configurationExitStatus: Int32 = 78  // EX_CONFIG
}

// MARK: - C status → error

/// Turns a `natsStatus` into a thrown `RelayError.call` (with the library's last error text
/// when it has one).
enum NatsCall {
    static func check(_ status: natsStatus, _ operation: String, jsError: jsErrCode = jsErrCode(0)) throws(RelayError) {
        guard status != NATS_OK else { return }
        throw error(status, operation, jsError: jsError)
    }

    static func error(_ status: natsStatus, _ operation: String, jsError: jsErrCode = jsErrCode(0)) -> RelayError {
        var text = String(cString: natsStatus_GetText(status))
        if let last = nats_GetLastError(nil) {
            let detail = String(cString: last)
            if !detail.isEmpty, detail != text { text += " (\(detail))" }
        }
        return .call(operation: operation, status: text, code: Int(jsError.rawValue))
    }
}
