import ControlProtocol
import SottoWire
import Synchronization

/// One control connection for requests, opened when first needed and again after the
/// daemon went away (a restart, an upgrade). Calls are serialised on it. The chat app's
/// objects call it from their own queues; a `sotto` command calls it on its one thread and
/// waits (docs/adr/0071).
///
/// ```swift
/// let channel = RequestChannel(socketPath: path)
/// let list = try channel.call(ClientRequests.listConversations())
/// ```
public final class RequestChannel: Sendable {
    public let socketPath: String
    private let client = Mutex<ControlClient?>(nil)

    public init(socketPath: String) { self.socketPath = socketPath }

    // MARK: Calling

    /// Makes `request`. A request that may be retried (`request.retry`) and failed because
    /// the connection was gone is made once more on a new connection; any other failure is
    /// thrown as it came.
    public func call<P>(_ request: ClientRequest<P>) throws(ControlClient.Failure) -> P.Result {
        try callKeepingJSON(request).result
    }

    /// `call`, also returning the result as the daemon wrote it (`sotto --json` prints that,
    /// members this build does not know included).
    public func callKeepingJSON<P>(_ request: ClientRequest<P>) throws(ControlClient.Failure) -> (result: P.Result, json: JSONValue) {
        do throws(ControlClient.Failure) {
            return try attempt(request.params)
        } catch let failure {
            guard request.retry, Self.isConnectionLoss(failure) else { throw failure }
            return try attempt(request.params)
        }
    }

    /// Closes the connection; the next call opens another.
    public func close() {
        client.withLock { $0 = nil }
    }

    private func attempt<P: ControlRequest>(_ params: P) throws(ControlClient.Failure) -> (result: P.Result, json: JSONValue) {
        let path = socketPath
        return try client.withLock { (current: inout ControlClient?) throws(ControlClient.Failure) -> (result: P.Result, json: JSONValue) in
            if current == nil { current = try ControlClient.connect(path: path) }
            do throws(ControlClient.Failure) {
                return try current!.callKeepingJSON(params)
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
