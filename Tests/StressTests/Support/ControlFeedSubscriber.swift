import Foundation
import TestSupport

/// A control-socket client that sends JSON-RPC `subscribe {since}` and records the seq of
/// every `change` notification, in arrival order, on a background thread.
///
/// ```swift
/// let feed = try ControlFeedSubscriber(socketPath: runtime.controlSocketPath, since: 0)
/// feed.waitUntilSeen(seq: 2_001, timeout: 60)
/// feed.seqs   // [1, 2, 3, …]
/// ```
final class ControlFeedSubscriber: @unchecked Sendable {
    private let fd: Int32
    private let condition = NSCondition()
    private var received: [Int64] = []
    private var highest: Int64 = 0
    private var ended = false
    private(set) var subscribedAtSeq: Int64?

    init(socketPath: String, since: Int64) throws {
        fd = try PushClient.connect(to: socketPath)
        let request = #"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"since":\#(since)}}"# + "\n"
        try PushClient.writeAll(fd, Array(request.utf8))
        let thread = Thread { [self] in readLoop() }
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
        shutdown(fd, Int32(SHUT_RDWR))
        condition.lock()
        while !ended { condition.wait() }
        condition.unlock()
        Glibc.close(fd)
    }

    private func readLoop() {
        LineStream.read(fd) { lines in handle(lines) }
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    private func handle(_ lines: [ArraySlice<UInt8>]) {
        var seqs: [Int64] = []
        var lastSeq: Int64?
        for line in lines {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            if object["method"] as? String == "change", let params = object["params"] as? [String: Any],
               let seq = (params["seq"] as? NSNumber)?.int64Value {
                seqs.append(seq)
            } else if let result = object["result"] as? [String: Any], let seq = (result["lastSeq"] as? NSNumber)?.int64Value {
                lastSeq = seq
            }
        }
        condition.lock()
        received += seqs
        highest = max(highest, seqs.max() ?? 0)
        if let lastSeq { subscribedAtSeq = lastSeq }
        condition.broadcast()
        condition.unlock()
    }
}

/// One JSON-RPC call on a fresh control connection; returns the `result` object.
enum ControlCall {
    static func call(_ socketPath: String, method: String, params: String = "{}") throws -> [String: Any] {
        let fd = try PushClient.connect(to: socketPath)
        defer { Glibc.close(fd) }
        try PushClient.writeAll(fd, Array((#"{"jsonrpc":"2.0","id":7,"method":"\#(method)","params":\#(params)}"# + "\n").utf8))
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !buffer.contains(0x0a) {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw StressFailure("control socket closed during \(method)") }
            buffer += chunk[0..<n]
        }
        let line = buffer[..<buffer.firstIndex(of: 0x0a)!]
        guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
              let result = object["result"] as? [String: Any] else {
            throw StressFailure("\(method) failed: \(String(decoding: line, as: UTF8.self))")
        }
        return result
    }
}
