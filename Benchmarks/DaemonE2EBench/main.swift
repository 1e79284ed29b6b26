import ControlProtocol
import Foundation
import SottoClient
import SottoCrypto
import SottoWire
import TestSupport

// End-to-end figures of the real processes (issue #5), printed with their goals:
//  1. worker commit → subscriber event: the time from a real `sotto-notify` ack arriving to
//     the daemon's `change` notification for that message arriving at a `subscribe` client;
//  2. `newConversation` round trip with the unused inbox ready (hit) and empty (miss).
// Build release and run through Benchmarks/daemon-e2e-bench.sh.

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }

func summary(_ values: [Double]) -> String {
    let sorted = values.sorted()
    return "p50 \(ms(percentile(sorted, 0.5))), p99 \(ms(percentile(sorted, 0.99))), max \(ms(sorted.last!)) (n=\(sorted.count))"
}

func pushLatency(pushes: Int, warmUp: Int) throws {
    let home = try DaemonHome()
    let daemon = try DaemonProcess.start(home: home)
    defer { _ = try? daemon.stop() }
    let control = try ControlClient.connect(path: home.controlSocketPath)
    let conversationId = try control.call(NewConversationParams()).conversationId
    let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
    let subscriber = try MessageArrivals(controlSocketPath: daemon.home.controlSocketPath) { $0.entityId }
    let worker = try builtExecutable("sotto-notify")

    var latencies: [Double] = []
    var workerTimes: [Double] = []
    for index in 0..<(warmUp + pushes) {
        let payload = String(decoding: try remote.push("push \(index)"), as: UTF8.self) + "\n"
        let spawned = MonotonicClock.nowNs()
        let child = try ChildProcess.launch(worker, ["--payload", "-"], environment: home.environment)
        child.write(payload)
        child.closeStdin()
        guard let line = child.readStdoutLine() else { fatalError("no ack: \(child.finish().stderr)") }
        let ackNs = MonotonicClock.nowNs()
        _ = child.finish()
        guard case .ok(let messageId, _)? = PushAck.parse(Array(line.utf8)) else { fatalError("refused: \(line)") }
        guard let arrived = subscriber.arrival(of: messageId, timeoutSeconds: 10) else { fatalError("no change for \(messageId)") }
        if index >= warmUp {
            latencies.append(Double(Int64(arrived) - Int64(ackNs)) / 1e6)
            workerTimes.append(Double(ackNs - spawned) / 1e6)
        }
    }
    print("worker ack → subscriber change: \(summary(latencies))   (goal p99 ≤ 5 ms)")
    print("  for scale, worker spawn → ack (process start, open, decrypt, commit): \(summary(workerTimes))")
}

func newConversationRoundTrip(samples: Int, keystorePath: (DaemonHome) -> String = { $0.keystorePath }) throws {
    let home = try DaemonHome()
    let daemon = try DaemonProcess.start(home: home)
    defer { _ = try? daemon.stop() }
    let clients = ClientPair(try ControlClient.connect(path: home.controlSocketPath), try ControlClient.connect(path: home.controlSocketPath))

    // Hits: the slot is ready before each call.
    var hits: [Double] = []
    for _ in 0..<samples {
        try daemon.waitForStatus { $0["unusedInboxReady"] as? Bool == true }
        let t0 = MonotonicClock.nowNs()
        _ = try clients.first.call(NewConversationParams())
        hits.append(Double(MonotonicClock.nowNs() - t0) / 1e6)
    }
    print("newConversation round trip, unused inbox hit:  \(summary(hits))   (goal ≤ 5 ms)")

    // Misses: two calls at once on two connections; one takes the prepared identity, the
    // other finds the slot empty and generates one on the spot. The keystore's slot, read
    // before the pair, tells which response was the hit.
    var pairHits: [Double] = []
    var misses: [Double] = []
    let keystore = try Keystore(directory: home.keystorePath)
    for _ in 0..<samples {
        try daemon.waitForStatus { $0["unusedInboxReady"] as? Bool == true }
        guard let prepared = try keystore.peekUnused()?.inboxId else { continue }
        let results = ResultPair()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let t0 = MonotonicClock.nowNs()
            let inboxId = (try? clients[index].call(NewConversationParams()))?.inboxId
            results.set(index, inboxId, Double(MonotonicClock.nowNs() - t0) / 1e6)
        }
        for (inboxId, time) in results.values { (inboxId == prepared ? { pairHits.append(time) } : { misses.append(time) })() }
    }
    print("newConversation, two at once: the hit \(summary(pairHits))")
    print("newConversation, two at once: the miss \(summary(misses))")
}

/// Two connections for `concurrentPerform(iterations: 2)`: iteration i uses only client i,
/// so no connection is shared between threads.
final class ClientPair: @unchecked Sendable {
    private let clients: [ControlClient]
    init(_ first: ControlClient, _ second: ControlClient) { clients = [first, second] }
    var first: ControlClient { clients[0] }
    subscript(index: Int) -> ControlClient { clients[index] }
}

final class ResultPair: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [(String?, Double)] = [(nil, 0), (nil, 0)]
    func set(_ index: Int, _ inboxId: String?, _ ms: Double) { lock.withLock { slots[index] = (inboxId, ms) } }
    var values: [(String?, Double)] { lock.withLock { slots } }
}

let pushes = Int(ProcessInfo.processInfo.environment["SOTTO_BENCH_PUSHES"] ?? "") ?? 500
print("== sotto daemon end-to-end (real processes) ==")
do {
    try pushLatency(pushes: pushes, warmUp: 20)
    try newConversationRoundTrip(samples: 100)
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
