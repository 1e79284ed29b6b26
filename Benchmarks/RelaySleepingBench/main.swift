import Foundation
import RelayTransport
import SharedStore
import TestSupport

// How long a push waits on the relay (issue #19 goal 6, docs/adr/0056). One device with
// AWAKE + SLEEPING identities, the first AWAKE marked awake (`awake-mailboxes/`); sotto-relayd
// with the bound BOUND_MS drains the others on short connections. One push to each mailbox,
// each published at a random moment within one bound, timed until the real worker stored it.
// The baseline relayd (every identity holds its connection) gets the same in the same run.
// Usage: RelaySleepingBench BIN_DIR BASELINE_RELAYD [BOUND_MS] [AWAKE] [SLEEPING]

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { print("usage: RelaySleepingBench BIN_DIR BASELINE_RELAYD [BOUND_MS] [AWAKE] [SLEEPING]"); exit(64) }
let binDirectory = arguments[1]
let baselineRelayd = arguments[2]
let boundMs = arguments.count > 3 ? Int(arguments[3]) ?? 60_000 : 60_000
let awakeCount = arguments.count > 4 ? Int(arguments[4]) ?? 20 : 20
let sleepingCount = arguments.count > 5 ? Int(arguments[5]) ?? 60 : 60
guard NatsServer.isInstalled else { print(NatsServer.skipMessage); exit(0) }
guard let vectors = try Vectors.load() else { print("vectors file not found: set SOTTO_VECTORS"); exit(1) }

struct BenchFailure: Error { let text: String }

/// Milliseconds each push waited, from its publish until the worker stored it: (awake, sleeping).
func waits(relayd: String, arguments relaydArguments: [String]) throws -> (awake: [Double], sleeping: [Double]) {
    let fixture = try WorkerFixture(vectors: vectors)
    defer { fixture.tmp.remove() }
    let boxes = try fixture.addMailboxes(awakeCount + sleepingCount)
    let marks = fixture.group.awakeMailboxesPath
    try FileManager.default.createDirectory(atPath: marks, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    for box in boxes.prefix(awakeCount) { _ = FileManager.default.createFile(atPath: marks + "/" + box.clientId, contents: nil) }
    let socket = try PushSocketServer.start(socketPath: fixture.runtimeDirectory + "/push.sock", accept: false,
                                            command: [binDirectory + "/sotto-notify", "--idle-timeout", "600"],
                                            environment: fixture.environment)
    defer { socket.stop() }
    let server = try NatsServer.start(storeDirectory: fixture.tmp.path + "/jetstream")
    defer { server.stop() }
    let publisher = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
    defer { publisher.close() }
    try publisher.ensureStream()
    let process = try LoggedProcess.launch(relayd, relaydArguments,
                                           environment: fixture.environment.merging(["SOTTO_RELAY": server.url]) { $1 })
    defer { process.signal(SIGTERM); _ = process.waitForExit() }
    guard process.waitForLine(containing: "mailboxes open", timeout: 120) else { throw BenchFailure(text: "relayd: \(process.output.suffix(5))") }
    sleep(8)  // every sleeping mailbox's first drain, spread over relayd's first 5 s

    // One push per mailbox at a random moment within one bound.
    let pushes = try boxes.map { try fixture.sealText("wait", to: $0) }
    let schedule = pushes.indices.map { ($0, Double.random(in: 0..<Double(boundMs))) }.sorted { $0.1 < $1.1 }
    let start = Date()
    var publishedAt: [String: Date] = [:]
    var next = 0
    let conn = try fixture.open()
    var storedAt: [String: Date] = [:]
    let deadline = start.addingTimeInterval(Double(boundMs) / 1_000 * 3 + 30)
    // Publishing and watching the database in one loop: each push is timed from its own publish.
    while storedAt.count < pushes.count {
        guard process.isRunning, Date() < deadline else { throw BenchFailure(text: "\(storedAt.count) of \(pushes.count) stored: \(process.output.suffix(5))") }
        while next < schedule.count, start.addingTimeInterval(schedule[next].1 / 1_000) <= Date() {
            let index = schedule[next].0
            _ = try publisher.publish(pushes[index].payload, to: try Mailbox(clientId: boxes[index].clientId), messageId: pushes[index].messageId)
            publishedAt[pushes[index].messageId] = Date()
            next += 1
        }
        for row in try conn.query("SELECT id FROM message") {
            let id = try row.string(0)
            if storedAt[id] == nil { storedAt[id] = Date() }
        }
        usleep(5_000)
    }
    let wait = { (index: Int) in storedAt[pushes[index].messageId]!.timeIntervalSince(publishedAt[pushes[index].messageId]!) * 1_000 }
    return (Array(0..<awakeCount).map(wait), Array(awakeCount..<(awakeCount + sleepingCount)).map(wait))
}

func describe(_ values: [Double]) -> String {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return "none" }
    let at = { (q: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    return String(format: "p50 %.0f ms, p99 %.0f ms, max %.0f ms", at(0.5), at(0.99), sorted.last!)
}

let baseline = try waits(relayd: baselineRelayd, arguments: [])
let current = try waits(relayd: binDirectory + "/sotto-relayd", arguments: ["--sleeping-drain-ms", "\(boundMs)"])
print("WAIT baseline relayd (every identity connected): \(describe(baseline.awake + baseline.sleeping))")
print("WAIT this build, \(awakeCount) awake mailboxes: \(describe(current.awake))")
print("WAIT this build, \(sleepingCount) sleeping mailboxes (bound \(boundMs) ms): \(describe(current.sleeping))")
let p50 = { (values: [Double]) in values.sorted()[values.count / 2] }
print(String(format: "WAIT ratios to the baseline's p50: awake %.2f, sleeping %.1f",
             p50(current.awake) / max(p50(baseline.awake + baseline.sleeping), 1),
             p50(current.sleeping) / max(p50(baseline.awake + baseline.sleeping), 1)))
