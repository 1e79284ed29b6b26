import RelayTransport
import SottoWire
import Synchronization

/// The daemon's connections to relays for sending (docs/adr/0028): one per relay URL, opened
/// on the first push to it and kept; the C client reconnects a lost one by itself. This
/// device's own credentials go only to its own relay (`SOTTO_RELAY`); any other relay a
/// member uses is reached without credentials. A connect that failed is not tried again for
/// `connectRetryMs`: the outbox's next push to that relay fails at once instead of waiting
/// out another connect timeout. Blocking: call it off the actor executor.
///
/// ```swift
/// let relays = RelayConnections(own: config) { outbox.wake() }   // told when a relay is back
/// let connection = try relays.connection(to: try RelayURL.parse("nats://relay.example:4222"))
/// relays.closeAll()                                             // at the daemon's shutdown
/// ```
final class RelayConnections: Sendable {
    /// How long a failed connect is remembered before the next push tries again.
    static let connectRetryMs: Int64 = 1_000

    private struct State {
        var open: [String: RelayConnection] = [:]
        var failed: [String: (untilMs: Int64, error: RelayError)] = [:]
        var closed = false
        /// "<relay URL> <body id>" of the bodies published in this run: a body goes to a relay
        /// once, not once per member (docs/protocol/bodies.md §6).
        var publishedBodies: Set<String> = []
    }

    /// How many published bodies are remembered; past it the memory starts over (a body
    /// published again is then a duplicate the relay refuses, not a second copy).
    static let maxRememberedBodies = 4096

    private let own: RelayConfiguration?
    private let options: RelayConnection.Options
    private let onReconnect: @Sendable () -> Void
    private let state = Mutex(State())

    init(own: RelayConfiguration?, options: RelayConnection.Options = RelayConnections.defaultOptions,
         onReconnect: @escaping @Sendable () -> Void = {}) {
        self.own = own
        self.options = options
        self.onReconnect = onReconnect
    }

    static var defaultOptions: RelayConnection.Options {
        var options = RelayConnection.Options()
        options.name = "sotto-daemon"
        return options
    }

    // MARK: - Connections

    /// The open connection to `url`, connecting (and creating the mailbox stream if the
    /// relay has none yet) on first use. Throws the connect error, or the remembered one
    /// within `connectRetryMs` of a failure, or `.call` after `closeAll`.
    func connection(to url: RelayURL) throws(RelayError) -> RelayConnection {
        let key = url.description
        let now = WallClock.nowMs()
        let known: Result<RelayConnection, RelayError>? = state.withLock { state in
            if state.closed { return .failure(.call(operation: "connect to \(url)", status: "the daemon is stopping", code: 0)) }
            if let open = state.open[key] { return .success(open) }
            if let failed = state.failed[key], failed.untilMs > now { return .failure(failed.error) }
            return nil
        }
        if let known { return try known.get() }

        let config = own.map { $0.url == url ? $0 : RelayConfiguration(url: url) } ?? RelayConfiguration(url: url)
        let connection: RelayConnection
        do throws(RelayError) {
            connection = try RelayConnection.connect(config, options: options) { [weak self, onReconnect] event in
                switch event {
                case .disconnected:
                    // closeAll's own disconnect at shutdown is no loss worth a warning.
                    guard let self, !self.state.withLock({ $0.closed }) else { return }
                    DaemonLog.warning("relay \(url) connection lost; the outbox keeps its pushes pending")
                case .reconnected:
                    DaemonLog.info("relay \(url) reconnected")
                    onReconnect()
                }
            }
            do throws(RelayError) {
                try connection.ensureStream()  // a relay no receiver has used yet has no stream
                try connection.ensureBodyStream()
            } catch {
                connection.close()
                throw error
            }
        } catch {
            state.withLock { state in state.failed[key] = (WallClock.nowMs() + Self.connectRetryMs, error) }
            throw error
        }
        let kept: RelayConnection? = state.withLock { state in
            guard !state.closed else { return nil }
            state.failed[key] = nil
            if let raced = state.open[key] { return raced }
            state.open[key] = connection
            return connection
        }
        guard let kept else {
            connection.close()
            throw .call(operation: "connect to \(url)", status: "the daemon is stopping", code: 0)
        }
        if kept !== connection { connection.close() }
        return kept
    }

    /// Whether this run already published `bodyId` to `url`.
    func hasPublished(bodyId: String, to url: RelayURL) -> Bool {
        state.withLock { $0.publishedBodies.contains("\(url) \(bodyId)") }
    }

    func recordPublished(bodyId: String, to url: RelayURL) {
        state.withLock { state in
            if state.publishedBodies.count >= Self.maxRememberedBodies { state.publishedBodies = [] }
            state.publishedBodies.insert("\(url) \(bodyId)")
        }
    }

    /// Closes every connection; later `connection(to:)` calls throw.
    func closeAll() {
        let open = state.withLock { state in
            state.closed = true
            defer { state.open = [:] }
            return Array(state.open.values)
        }
        for connection in open { connection.close() }
    }
}
