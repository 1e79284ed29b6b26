import ControlProtocol

/// How much the control socket holds at once (docs/adr/0010): connections, unfinished
/// request bytes, and replies a client has not read. Past a bound the daemon refuses
/// cleanly (a JSON-RPC `-32003 daemon busy` line, then close) instead of growing.
///
/// ```swift
/// let limits = try ControlLimits.forFileLimit(FileDescriptorLimit.raiseSoftToHard(), environment: env)
/// limits.maxConnections   // 1024, or fewer when the process may open few files
/// ```
public struct ControlLimits: Sendable, Equatable {
    /// Connections served at once. At the bound the oldest connection that has not sent a
    /// request yet is closed to make room; if every one has, the newcomer is refused.
    public var maxConnections: Int
    /// The longest request line; a longer one gets `-32600` and is skipped.
    public var maxLineBytes = JSONRPC.maxLineBytes
    /// What any connection may buffer of an unfinished line without asking the shared budget
    /// (a normal request is far smaller, so it always fits).
    public var smallBufferBytes = 16 * 1024
    /// Unfinished-line bytes beyond each connection's small buffer, all connections together.
    public var sharedBufferBytes = 16 * 1024 * 1024
    /// Output a client has not read; a client further behind (a `watch` that stopped
    /// reading) is disconnected.
    public var maxPendingOutputBytes = 8 * 1024 * 1024
    /// No further request of a client is read while this much output waits for it.
    public var pauseReadingAboveOutputBytes = 256 * 1024
    /// How long a stop waits for the requests in flight to be answered before it closes
    /// their connections anyway.
    public var stopGraceSeconds: Int64 = 5

    public static let defaultMaxConnections = 1024
    /// File descriptors left for everything else: database, keystore, pushes, sockets.
    public static let reservedFileDescriptors = 192

    public struct ConfigurationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The limits for a process that may open `fileLimit` files. `SOTTO_CONTROL_MAX_CONNECTIONS`
    /// (1…65536) overrides the connection bound (tests use it to reach the fd limit first).
    public static func forFileLimit(_ fileLimit: Int, environment: [String: String]) throws -> ControlLimits {
        if let text = environment["SOTTO_CONTROL_MAX_CONNECTIONS"] {
            guard let value = Int(text), (1...65_536).contains(value) else {
                throw ConfigurationError(description: "SOTTO_CONTROL_MAX_CONNECTIONS must be 1…65536")
            }
            return ControlLimits(maxConnections: value)
        }
        return ControlLimits(maxConnections: max(16, min(defaultMaxConnections, fileLimit - reservedFileDescriptors)))
    }
}
