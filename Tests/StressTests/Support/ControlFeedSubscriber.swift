import ControlProtocol
import Foundation
import SottoClient
import SottoWire
import TestSupport

/// A `subscribe {since}` on its own control connection (SottoClient's `ControlClient`) that
/// records the seq of every `change` notification, in arrival order, on a background thread.
///
/// ```swift
/// let feed = try ControlFeedSubscriber(socketPath: runtime.controlSocketPath, since: 0)
/// feed.waitUntilSeen(seq: 2_001, timeout: 60)
/// feed.seqs   // [1, 2, 3, …]
/// ```
final class ControlFeedSubscriber: @unchecked Sendable {
    private let client: ControlClient
    private let condition = NSCondition()
    private var received: [Int64] = []
    private var highest: Int64 = 0
    private var ended = false
    private(set) var subscribedAtSeq: Int64?

    init(socketPath: String, since: Int64) throws {
        do {
            client = try ControlClient.connect(path: socketPath)
        } catch {
            throw StressFailure("subscribe: \(error)")
        }
        let thread = Thread { [self] in readLoop(since: since) }
        thread.start()
    }

    var seqs: [Int64] {
        condition.lock()
        defer { condition.unlock() }
        return received
    }

    /// True once a change with `seq` or later has arrived; false on timeout or end of stream.
    @discardableResult
    func waitUntilSeen(seq: Int64, timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while highest < seq {
            if ended || !condition.wait(until: deadline) { return highest >= seq }
        }
        return true
    }

    func close() {
        client.shutdown()
        condition.lock()
        while !ended { condition.wait() }
        condition.unlock()
    }

    /// Subscribes, then reads changes until the connection ends. The `subscribe` call and
    /// every read happen on this thread: the client is not shared.
    private func readLoop(since: Int64) {
        if let subscribed = try? client.call(SubscribeParams(since: since)) {
            condition.lock()
            subscribedAtSeq = subscribed.lastSeq
            condition.unlock()
            for change in client.changes {
                condition.lock()
                received.append(change.seq)
                highest = max(highest, change.seq)
                condition.broadcast()
                condition.unlock()
            }
        }
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }
}

/// One JSON-RPC call on a fresh control connection; returns the `result` object.
enum ControlCall {
    static func call(_ socketPath: String, method: String, params: String = "{}") throws -> [String: Any] {
        do {
            let client = try ControlClient.connect(path: socketPath)
            switch try client.callRaw(method: method, params: try JSONParser.parse(params)) {
            case .success(let result):
                guard let object = result.foundationObject as? [String: Any] else { throw StressFailure("\(method): \(result)") }
                return object
            case .failure(let error):
                throw StressFailure("\(method) failed: \(error.code) \(error.message)")
            }
        } catch let error as StressFailure {
            throw error
        } catch {
            throw StressFailure("\(method) failed: \(error)")
        }
    }
}
