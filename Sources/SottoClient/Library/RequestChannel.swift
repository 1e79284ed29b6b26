import ControlProtocol
import Synchronization

/// One control connection for requests, opened when first needed and again after the
/// daemon went away (a restart, an upgrade). Calls are serialised on it; callers run them
/// off the UI thread (`ConversationList` and `Timeline` use their own queues).
///
/// ```swift
/// let channel = RequestChannel(socketPath: path)
/// let list = try channel.call(ListConversationsParams(), retry: true)
/// ```
public final class RequestChannel: Sendable {
    public let socketPath: String
    private let client = Mutex<ControlClient?>(nil)

    public init(socketPath: String) { self.socketPath = socketPath }

    /// Calls `params`'s method. With `retry`, a call that failed because the connection was
    /// gone is made once more on a new connection: only for calls that may run twice
    /// (reads, mark read), never for a send.
    public func call<P: ControlRequest>(_ params: P, retry: Bool) throws(ControlClient.Failure) -> P.Result {
        do throws(ControlClient.Failure) {
            return try attempt(params)
        } catch let failure {
            guard retry, Self.isConnectionLoss(failure) else { throw failure }
            return try attempt(params)
        }
    }

    /// Closes the connection; the next call opens another.
    public func close() {
        client.withLock { $0 = nil }
    }

    private func attempt<P: ControlRequest>(_ params: P) throws(ControlClient.Failure) -> P.Result {
        let path = socketPath
        return try client.withLock { (current: inout ControlClient?) throws(ControlClient.Failure) -> P.Result in
            if current == nil { current = try ControlClient.connect(path: path) }
            do throws(ControlClient.Failure) {
                return try current!.call(params)
            } catch let failure {
                if Self.isConnectionLoss(failure) { current = nil }
                throw failure
            }
        }
    }

    /// A failure that says the connection is gone, not that the daemon refused.
    static func isConnectionLoss(_ failure: ControlClient.Failure) -> Bool {
        switch failure {
        case .daemonNotRunning, .protocolError, .timedOut: return true
        case .permissionDenied, .rpc: return false
        }
    }
}
