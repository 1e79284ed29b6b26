import Foundation
import RelayTransport
import SharedStore
import TestSupport

// Catch-up through the relay over many mailboxes of one device (issue #19, docs/adr/0044):
// PUSHES valid pushes spread over MAILBOXES identities of one device, queued while
// sotto-relayd is stopped, then drained into the real worker (Accept=no, the high-rate
// variant) once it starts. Run with two sotto-relayd builds, alternating, in the same
// minutes: the baseline (one shared connection, today's main) and this one (one connection
// per identity). Prints pushes/s of each and the ratio (goal: ≥ 2,000/s, ratio ≈ 1).
// Usage: RelayPrivacyBench BIN_DIR BASELINE_RELAYD [PUSHES] [MAILBOXES] [ROUNDS] [padded]
// `padded`: the baseline reads padded frames too (a baseline built after docs/adr/0044).

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { print("usage: RelayPrivacyBench BIN_DIR BASELINE_RELAYD [PUSHES] [MAILBOXES] [ROUNDS]"); exit(64) }
let binDirectory = arguments[1]
let baselineRelayd = arguments[2]
let count = arguments.count > 3 ? Int(arguments[3]) ?? 10_000 : 10_000
let mailboxCount = arguments.count > 4 ? Int(arguments[4]) ?? 20 : 20
let rounds = arguments.count > 5 ? Int(arguments[5]) ?? 2 : 2
let baselinePadded = arguments.count > 6 && arguments[6] == "padded"
guard NatsServer.isInstalled else { print(NatsServer.skipMessage); exit(0) }
guard let vectors = try Vectors.load() else { print("vectors file not found: set SOTTO_VECTORS"); exit(1) }

/// `padded`: the pushes as this branch publishes them (docs/protocol/relay-padding.md); the
/// baseline relayd (main) reads them unpadded, as main's senders publish them.
func catchUp(relayd: String, padded: Bool) throws -> Double {
    let fixture = try WorkerFixture(vectors: vectors)
    defer { fixture.tmp.remove() }
    let boxes = try fixture.addMailboxes(mailboxCount)
    let pushes = try (0..<count).map { try fixture.sealText("catch-up \($0)", to: boxes[$0 % boxes.count]) }
    let worker = binDirectory + "/sotto-notify"
    let socket = try PushSocketServer.start(socketPath: fixture.runtimeDirectory + "/push.sock", accept: false,
                                            command: [worker, "--idle-timeout", "600"], environment: fixture.environment)
    defer { socket.stop() }
    let server = try NatsServer.start(storeDirectory: fixture.tmp.path + "/jetstream")
    defer { server.stop() }
    let publisher = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
    defer { publisher.close() }
    try publisher.ensureStream()
    let mailboxes = try boxes.map { try Mailbox(clientId: $0.clientId) }
    if padded {
        let batch = pushes.enumerated().map { index, push in
            BatchPush(payload: push.payload, mailbox: mailboxes[index % mailboxes.count], messageId: push.messageId)
        }
        for result in publisher.publishAll(batch) { _ = try result.get() }
    } else {
        for (index, push) in pushes.enumerated() {
            _ = try publisher.publish(push.payload, to: mailboxes[index % mailboxes.count], messageId: push.messageId, padded: false)
        }
    }
    let conn = try fixture.open()
    let start = Date()
    let process = try LoggedProcess.launch(relayd, [], environment: fixture.environment.merging(["SOTTO_RELAY": server.url]) { $1 })
    defer { process.signal(SIGTERM); _ = process.waitForExit() }
    while try conn.queryOne("SELECT count(*) FROM message")?.int64(0) ?? 0 < Int64(count) {
        guard process.isRunning else { throw BenchFailure(text: "relayd ended: \(process.output.suffix(5))") }
        usleep(5_000)
    }
    return Double(count) / Date().timeIntervalSince(start)
}

var baseline: [Double] = []
var current: [Double] = []
for _ in 0..<rounds {
    baseline.append(try catchUp(relayd: baselineRelayd, padded: baselinePadded))
    current.append(try catchUp(relayd: binDirectory + "/sotto-relayd", padded: true))
}
let best = { (rates: [Double]) in rates.max() ?? 0 }
print(String(format: "CATCH-UP %d pushes over %d mailboxes: baseline relayd %.0f/s, this build %.0f/s, ratio %.2f (goal >= 2000/s)",
             count, mailboxCount, best(baseline), best(current), best(current) / max(best(baseline), 1)))

struct BenchFailure: Error { let text: String }
