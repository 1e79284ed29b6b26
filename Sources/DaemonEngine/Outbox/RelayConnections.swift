import DaemonLogging
import RelayTransport
import SottoWire
import Synchronization

/// The daemon's connections to relays for sending (docs/adr/0028): one per relay URL and
/// sending identity (docs/adr/0044), so no connection ever publishes for two of this device's
/// conversations; opened on the first push and closed after `idleMs` without one (the outbox
/// calls `closeIdle`), so a thousand conversations do not hold a thousand connections. The C
/// client reconnects a lost one by itself. This device's own credentials go only to its own
/// relay (`SOTTO_RELAY`); any other relay a member uses is reached without credentials. With
/// the relay's signing key every connection logs in as a user of its own, made for it
/// (docs/adr/0051): nothing a relay sees is the same for two of the device's conversations. A
/// connect that failed is not tried again for `connectRetryMs` (for any sender): the
/// outbox's next push to that relay fails at once instead of waiting out another connect
/// timeout. Blocking: call it off the actor executor.
///
/// ```swift
/// let relays = RelayConnections(own: config) { outbox.wake() }   // told when a relay is back
/// let connection = try relays.connection(to: try RelayURL.parse("nats://relay.example:4222"),
///                                        for: RelaySender(conversationId: id))
/// relays.closeIdle()                                            // returns when to call it next
/// relays.closeAll()                                             // at the daemon's shutdown
/// ```
public final class RelayConnections: Sendable {
    /// How long a failed connect is remembered before the next push tries again.
    static let connectRetryMs: Int64 = 1_000
    /// How long a sender's connection stays open after its last push (docs/adr/0044).
    public static let defaultIdleMs: Int64 = 120_000
    public static let idleSetting = NumberSetting(variable: "SOTTO_RELAY_IDLE_MS", default: defaultIdleMs,
                                                 range: 100...86_400_000)

    private struct Held {
        let connection: RelayConnection
        var lastUsedMs: Int64
    }

    private struct State {
        /// By "<relay URL> <sender>".
        var open: [String: Held] = [:]
        var failed: [String: (untilMs: Int64, error: RelayError)] = [:]
        var closed = false
        /// "<relay URL> <body id>" of the bodies published in this outbox pass: a body goes to
        /// a relay once per pass, not once per member (docs/protocol/bodies.md §6).
        var publishedBodies: Set<String> = []
    }

    /// How many published bodies are remembered; past it the memory starts over (a body
    /// published again is then a duplicate the relay refuses, not a second copy).
    static let maxRememberedBodies = 4096

    private let own: RelayConfiguration?
    private let options: RelayConnection.Options
    let idleMs: Int64
    private let onReconnect: @Sendable () -> Void
    private let state = Mutex(State())

    init(own: RelayConfiguration?, options: RelayConnection.Options = RelayConnection.Options(),
         idleMs: Int64 = RelayConnections.defaultIdleMs, onReconnect: @escaping @Sendable () -> Void = {}) {
        self.own = own
        self.options = options
        self.idleMs = idleMs
        self.onReconnect = onReconnect
    }

    // MARK: - Connections

    /// The open connection of `sender` to `url`, connecting (and creating the mailbox
    /// stream if the relay has none yet) on first use. Throws the connect error, or the
    /// remembered one within `connectRetryMs` of a failure, or `.call` after `closeAll`.
    func connection(to url: RelayURL, for sender: RelaySender) throws(RelayError) -> RelayConnection {
        let urlKey = url.description
        let key = urlKey + " " + sender.key
        let now = WallClock.nowMs()
        let known: Result<RelayConnection, RelayError>? = state.withLock { state in
            if state.closed { return .failure(.call(operation: "connect to \(url)", status: "the daemon is stopping", code: 0)) }
            if state.open[key] != nil {
                state.open[key]!.lastUsedMs = now
                return .success(state.open[key]!.connection)
            }
            if let failed = state.failed[urlKey], failed.untilMs > now { return .failure(failed.error) }
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
                // A relay with per-identity users (docs/adr/0051) has its operator's streams
                // and lets no user make one; each connection here logs in as a fresh user.
                if !config.credentials.isPerIdentity {
                    try connection.ensureStream()  // a relay no receiver has used yet has no stream
                    try connection.ensureBodyStream()
                }
            } catch {
                connection.close()
                throw error
            }
        } catch {
            state.withLock { state in state.failed[urlKey] = (WallClock.nowMs() + Self.connectRetryMs, error) }
            throw error
        }
        let kept: RelayConnection? = state.withLock { state in
            guard !state.closed else { return nil }
            state.failed[urlKey] = nil
            if let raced = state.open[key] { return raced.connection }
            state.open[key] = Held(connection: connection, lastUsedMs: WallClock.nowMs())
            return connection
        }
        guard let kept else {
            connection.close()
            throw .call(operation: "connect to \(url)", status: "the daemon is stopping", code: 0)
        }
        if kept !== connection { connection.close() }
        return kept
    }

    /// A new outbox pass: what earlier passes published is not trusted to be there still (the
    /// relay may have lost it, or been replaced, while a push waited for its retry), so each
    /// pass publishes its bodies again; the relay refuses a second copy of one it holds.
    func forgetPublishedBodies() {
        state.withLock { $0.publishedBodies = [] }
    }

    /// Whether this pass already published `bodyId` to `url`.
    func hasPublished(bodyId: String, to url: RelayURL) -> Bool {
        state.withLock { $0.publishedBodies.contains("\(url) \(bodyId)") }
    }

    func recordPublished(bodyId: String, to url: RelayURL) {
        state.withLock { state in
            if state.publishedBodies.count >= Self.maxRememberedBodies { state.publishedBodies = [] }
            state.publishedBodies.insert("\(url) \(bodyId)")
        }
    }

    /// How many connections are open now (the benchmark's "held at rest").
    var openCount: Int { state.withLock { $0.open.count } }

    /// Closes the connections no push used for `idleMs`; returns when the next one falls
    /// idle (nil: none open). A publish that raced with it finds its connection closed and
    /// fails like an unreachable relay: the outbox retries it on a new connection.
    @discardableResult
    func closeIdle() -> Int64? {
        let now = WallClock.nowMs()
        let (idle, next): ([RelayConnection], Int64?) = state.withLock { state in
            var idle: [RelayConnection] = []
            var next: Int64?
            for (key, held) in state.open {
                if now - held.lastUsedMs >= idleMs {
                    idle.append(held.connection)
                    state.open[key] = nil
                } else {
                    next = min(next ?? .max, held.lastUsedMs + idleMs)
                }
            }
            return (idle, next)
        }
        for connection in idle { connection.close() }
        return next
    }

    /// Closes every connection; later `connection(to:for:)` calls throw.
    func closeAll() {
        let open = state.withLock { state in
            state.closed = true
            defer { state.open = [:] }
            return state.open.values.map(\.connection)
        }
        for connection in open { connection.close() }
    }
}
