import Foundation
import RelayTransport
import SottoWire
import TestSupport

// Catch-up through a relay (issue #12, docs/adr/0027): N pushes queued in a mailbox while
// sotto-relayd is stopped, then drained into push.sock once it starts (sotto-relayd hands
// each fetch of up to 256 to one worker as a batch: one start, one commit), beside "direct":
// the same N pushes sent straight to push.sock by one sequential sender, one PROTOCOL §2
// exchange per push (connect, payload + LF, half-close, read the ack), which is what a remote
// sender does. Both under Accept=yes (the default unit: one worker start per connection)
// and Accept=no (the high-rate variant). Prints pushes/s, the throughput ratio relay/direct
// and the time the relay adds to the direct path (goal: catch-up ≥ 2,000 pushes/s, and
// the relay adding ≤ 20 %, i.e. relay time / direct time ≤ 1.20).
// Usage: RelayBench BIN_DIR [PUSHES]

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { print("usage: RelayBench BIN_DIR [PUSHES]"); exit(64) }
let binDirectory = arguments[1]
let count = arguments.count > 2 ? Int(arguments[2]) ?? 10_000 : 10_000
guard NatsServer.isInstalled else { print(NatsServer.skipMessage); exit(0) }
guard let vectors = try Vectors.load() else { print("vectors file not found: set SOTTO_VECTORS"); exit(1) }

/// Polls one count on one open connection every 5 ms (cheap beside the work measured).
func waitFor(_ fixture: WorkerFixture, stored target: Int) throws {
    let conn = try fixture.open()
    while try conn.queryOne("SELECT count(*) FROM message")?.int64(0) ?? 0 < Int64(target) { usleep(5_000) }
}

/// One fresh device per run, so every run starts from the same database size.
func run(relay: Bool, acceptYes: Bool) throws -> Double {
    let fixture = try WorkerFixture(vectors: vectors)
    defer { fixture.tmp.remove() }
    let pushes = try (0..<count).map { try fixture.sealTextForRelay("catch-up \($0)") }
    let worker = binDirectory + "/sotto-notify"
    let socket = try PushSocketServer.start(
        socketPath: fixture.runtimeDirectory + "/push.sock", accept: acceptYes,
        command: acceptYes ? [worker] : [worker, "--idle-timeout", "600"], environment: fixture.environment)
    defer { socket.stop() }
    guard relay else {
        let start = Date()
        for push in pushes { _ = try PushClient.send(push.payload, to: socket.socketPath) }
        try waitFor(fixture, stored: count)
        return Double(count) / Date().timeIntervalSince(start)
    }
    let server = try NatsServer.start(storeDirectory: fixture.tmp.path + "/jetstream")
    defer { server.stop() }
    let publisher = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
    defer { publisher.close() }
    try publisher.ensureStream()
    let mailbox = try Mailbox(clientId: fixture.recipient.clientId)
    for push in pushes { _ = try publisher.publish(push.payload, to: mailbox, messageId: push.messageId) }
    let start = Date()
    let relayd = try LoggedProcess.launch(binDirectory + "/sotto-relayd", [],
                                          environment: fixture.environment.merging(["SOTTO_RELAY": server.url]) { $1 })
    defer { relayd.signal(SIGTERM); _ = relayd.waitForExit() }
    try waitFor(fixture, stored: count)
    return Double(count) / Date().timeIntervalSince(start)
}

/// One Accept=yes worker start serving the largest batch (`PushBatchExchange.maxPushes`):
/// wall time seen by the sender and the peak RSS the worker logs when it is done, against
/// its 30 s / 24 MB budget (systemd/sotto-push@.service).
func largestBatch() throws -> (ms: Double, rssKB: Int) {
    let fixture = try WorkerFixture(vectors: vectors)
    defer { fixture.tmp.remove() }
    let pushes = try (0..<PushBatchExchange.maxPushes).map { try fixture.sealTextForRelay("budget \($0)") }
    let socket = try PushSocketServer.start(socketPath: fixture.runtimeDirectory + "/push.sock", accept: true,
                                            command: [binDirectory + "/sotto-notify"], environment: fixture.environment)
    defer { socket.stop() }
    let fd = try PushClient.connect(to: socket.socketPath)
    let start = Date()
    let answer = PushBatchExchange.run(fd, payloads: pushes.map(\.payload), timeoutMs: 35_000)
    let ms = Date().timeIntervalSince(start) * 1000
    close(fd)
    guard case .acked(let acks) = answer, acks.allSatisfy({ if case .acked(.ok) = $0 { true } else { false } }) else {
        throw PushClient.Failure(message: "the batch was not stored: \(answer)")
    }
    let deadline = Date(timeIntervalSinceNow: 10)
    while Date() < deadline {
        if let line = socket.log.split(separator: "\n").last(where: { $0.contains("batch done, peak RSS ") }),
           let kb = Int(line.components(separatedBy: "peak RSS ").last?.prefix { $0.isNumber } ?? "") {
            return (ms, kb)
        }
        usleep(10_000)
    }
    throw PushClient.Failure(message: "the worker logged no peak RSS")
}

print("RELAY catch-up: \(count) pushes, one device, release binaries from \(binDirectory)")
let budget = try largestBatch()
print(String(format: "RELAY one worker start, one batch of %d pushes: %.0f ms, peak RSS %d KiB (budget 30 s, 24576 KiB)",
             PushBatchExchange.maxPushes, budget.ms, budget.rssKB))
for acceptYes in [true, false] {
    let direct = try run(relay: false, acceptYes: acceptYes)
    let relayed = try run(relay: true, acceptYes: acceptYes)
    let mode = acceptYes ? "Accept=yes" : "Accept=no "
    let goal = relayed >= 2_000 && direct / relayed <= 1.2 ? "goal met" : "goal missed"
    print(String(format: "RELAY catch-up %@: direct push.sock (one §2 exchange per push) %7.0f pushes/s, "
                 + "through the relay (batches) %7.0f pushes/s; relay/direct throughput %.2f, time %.2f (%@)",
                 mode, direct, relayed, relayed / direct, direct / relayed, goal))
}
