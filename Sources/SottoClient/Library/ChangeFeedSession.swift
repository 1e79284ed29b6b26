import ControlProtocol
import Glibc
import Synchronization

/// The daemon's change feed on a thread of its own, surviving a dropped connection: it
/// reconnects (every 50 ms, then backing off to 1 s) and subscribes again with `since` the
/// last seq it delivered, so across a daemon restart no change is missed and none is
/// delivered twice. With `conversation`, only that conversation's changes — and while the
/// session is connected the daemon counts the conversation open in a client (no desktop
/// notification for it, its inbox kept awake), as `sotto watch --conversation` does.
///
/// ```swift
/// let feed = ChangeFeedSession(socketPath: path, conversation: "3fa2") { event in
///     if case .changes(let changes) = event { for change in changes { print(change.seq, change.kind) } }
/// }
/// feed.start()
/// defer { feed.stop() }
/// ```
public final class ChangeFeedSession: Sendable {
    /// What the session reports, in order, on its own thread.
    public enum Event: Sendable {
        /// Subscribed (again): the feed is at `lastSeq`; `gap` names changes a replay could not read.
        case connected(lastSeq: Int64, gap: ChangeGap?)
        /// New changes, each seq higher than every one delivered before.
        case changes([ChangeNotification])
        /// The connection is gone; the session is reconnecting. `reason` is for a status line.
        case disconnected(reason: String)
        /// The daemon refused the subscription (an unknown conversation): the session ends.
        case refused(reason: String)
    }

    public let socketPath: String
    public let conversation: String?
    private let onEvent: @Sendable (Event) -> Void
    private struct State {
        var lastSeq: Int64?
        var stopped = false
        var started = false
        /// The connected socket, for `stop` to shut down under a blocked read.
        var fd: Int32 = -1
    }
    private let state: Mutex<State>

    /// `since`: replay what came after it first (nil: live changes only, from now).
    public init(socketPath: String, conversation: String? = nil, since: Int64? = nil,
                onEvent: @escaping @Sendable (Event) -> Void) {
        self.socketPath = socketPath
        self.conversation = conversation
        self.onEvent = onEvent
        self.state = Mutex(State(lastSeq: since))
    }

    /// The seq of the last change delivered (or the feed's position at the first subscribe).
    public var lastSeq: Int64? { state.withLock { $0.lastSeq } }

    /// Starts the session's thread (once).
    public func start() {
        guard claimStart() else { return }
        DetachedThread.start { [self] in _ = run(endingIfNeverConnected: false) }
    }

    /// Runs the session on the calling thread instead of a thread of its own, until `stop`
    /// (from another thread or a handler) or the daemon's refusal, reconnecting as `start`
    /// does: what `sotto watch` blocks in. With `endingIfNeverConnected`, a first
    /// subscription that fails (no daemon) ends it at once instead of being retried; once
    /// subscribed, a lost connection is always retried. Returns what ended it: the refusal,
    /// the first connection's failure, or nil after `stop` (or when already started).
    ///
    /// ```swift
    /// let feed = ChangeFeedSession(socketPath: path, since: 0) { event in show(event) }
    /// if let failure = feed.follow(endingIfNeverConnected: true) { fail(failure) }
    /// ```
    public func follow(endingIfNeverConnected: Bool) -> ControlClient.Failure? {
        guard claimStart() else { return nil }
        return run(endingIfNeverConnected: endingIfNeverConnected)
    }

    private func claimStart() -> Bool {
        state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
    }

    /// Ends the session: its thread stops reading and delivers nothing more.
    public func stop() {
        let fd = state.withLock { state in
            state.stopped = true
            return state.fd
        }
        if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    // MARK: The session's thread

    private func run(endingIfNeverConnected: Bool) -> ControlClient.Failure? {
        var backoffMs: UInt32 = 50
        var everConnected = false
        while !stopped {
            switch session() {
            case .ended(let failure):
                return failure
            case .lost(let failure, let wasConnected):
                if stopped { return nil }
                if wasConnected {
                    everConnected = true
                    backoffMs = 50
                    onEvent(.disconnected(reason: Self.reason(failure)))
                } else if endingIfNeverConnected && !everConnected {
                    return failure
                }
                usleep(backoffMs * 1000)
                backoffMs = min(backoffMs * 2, 1000)
            }
        }
        return nil
    }

    /// How one connection ended: for good (with the refusal, if that was it), or lost.
    private enum Outcome { case ended(ControlClient.Failure?), lost(ControlClient.Failure, wasConnected: Bool) }

    /// One connection: subscribe, then deliver changes until it ends.
    private func session() -> Outcome {
        let client: ControlClient
        do throws(ControlClient.Failure) {
            client = try ControlClient.connect(path: socketPath)
        } catch let failure {
            return .lost(failure, wasConnected: false)
        }
        let since = state.withLock { state -> Int64?? in
            guard !state.stopped else { return .none }
            state.fd = client.fd
            return .some(state.lastSeq)
        }
        guard let since else { return .ended(nil) }
        defer { state.withLock { $0.fd = -1 } }
        let subscribed: SubscribeResult
        do throws(ControlClient.Failure) {
            subscribed = try client.call(SubscribeParams(since: since, conversation: conversation))
        } catch let failure {
            if case .rpc(let error) = failure {
                onEvent(.refused(reason: error.message))
                return .ended(failure)
            }
            return .lost(failure, wasConnected: false)
        }
        state.withLock { state in
            if state.lastSeq == nil { state.lastSeq = subscribed.lastSeq }
        }
        onEvent(.connected(lastSeq: subscribed.lastSeq, gap: subscribed.gap))
        while true {
            let change: ChangeNotification?
            do throws(ControlClient.Failure) {
                change = try client.nextChange()
            } catch let failure {
                return stopped ? .ended(nil) : .lost(failure, wasConnected: true)
            }
            guard let change else { return stopped ? .ended(nil) : .lost(.protocolError(Self.closed), wasConnected: true) }
            // A replay after a reconnect starts after lastSeq; anything at or before it was delivered.
            let fresh = state.withLock { state -> Bool in
                guard !state.stopped, change.seq > (state.lastSeq ?? 0) else { return false }
                state.lastSeq = change.seq
                return true
            }
            if stopped { return .ended(nil) }
            if fresh { onEvent(.changes([change])) }
        }
    }

    private static let closed = "the daemon closed the connection"

    /// What a status line says of a lost connection.
    private static func reason(_ failure: ControlClient.Failure) -> String {
        if case .protocolError(let detail) = failure, detail == closed { return closed }
        return failure.description
    }
}
