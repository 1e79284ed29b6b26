import Foundation
import SottoWire
import TestSupport

// worker-bench: spawn→durable-ack latency of sotto-notify beside a C baseline doing the same
// durable insert and a bare C acker, all in one run through systemd-socket-activate
// (Accept=yes); peak RSS of each; pushes per second with Accept=no beside Accept=yes.
// Run through Benchmarks/worker-bench.sh, which builds release and compiles the C programs.
//
//   worker-bench <sotto-notify> <baseline> <acker> [pushes]
//   worker-bench --alone <sotto-notify> [pushes]    no daemon, no held connection (AloneBench)
//   worker-bench --keyring <sotto-notify> [pushes]  the key from the kernel keyring vs a file (KeyringBench)

let arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == "--keyring" {
    try KeyringBench.run(worker: arguments[2], pushes: arguments.count > 3 ? Int(arguments[3]) ?? 200 : 200)
    exit(0)
}
if arguments.count >= 3, arguments[1] == "--alone" {
    try AloneBench.run(worker: arguments[2], pushes: arguments.count > 3 ? Int(arguments[3]) ?? 3_000 : 3_000)
    exit(0)
}
guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: worker-bench SOTTO_NOTIFY BASELINE ACKER [PUSHES] | --alone SOTTO_NOTIFY [PUSHES]\n".utf8))
    exit(64)
}
let (worker, baseline, acker) = (arguments[1], arguments[2], arguments[3])
let pushCount = arguments.count > 4 ? Int(arguments[4]) ?? 200 : 200

guard let vectors = try Vectors.load() else { fatalError("vectors not found; set SOTTO_VECTORS") }
let fixture = try WorkerFixture(vectors: vectors)
// The baseline writes into its own table of a WAL database with the same durability.
let baselineDB = fixture.tmp.path + "/baseline.sqlite"
_ = try ChildProcess.run("/usr/bin/sqlite3", [baselineDB, "PRAGMA journal_mode=WAL; CREATE TABLE baseline(id TEXT PRIMARY KEY, payload BLOB);"])
let environment = fixture.environment.merging(["BASELINE_DB": baselineDB]) { $1 }

// In the real system the daemon keeps connections open on the database, so a worker finds
// a valid WAL index and never recovers the WAL from scratch. Hold one open connection on
// each database, as the daemon would, so neither side pays for a recovery no user sees.
func holdConnection(_ path: String) throws -> ChildProcess {
    let holder = try ChildProcess.launch("/usr/bin/sqlite3", [path])
    holder.write("SELECT count(*) FROM sqlite_master;\nSELECT 'held';\n")
    guard holder.waitForLine(containing: "held") != nil else { throw PushClient.Failure(message: "sqlite3 holder failed") }
    return holder
}
let holders = [try holdConnection(fixture.group.databasePath), try holdConnection(baselineDB)]
defer { for holder in holders { holder.terminate() } }

func sealed(_ n: Int, _ tag: String) throws -> [[UInt8]] {
    try (0..<n).map { try fixture.sealText("\(tag) \($0)").payload }
}

// `WORKER_BENCH_PREPARE=DIR`: copy a seeded group directory and N payload files to DIR for
// profiling the worker by hand (perf, strace), then exit.
if let keep = ProcessInfo.processInfo.environment["WORKER_BENCH_PREPARE"] {
    _ = try ChildProcess.run("/bin/cp", ["-a", fixture.tmp.path, keep])
    for (index, payload) in try sealed(pushCount, "profile").enumerated() {
        try Data(payload).write(to: URL(fileURLWithPath: "\(keep)/payload-\(index)"))
    }
    print(fixture.environment.map { "\($0.key)=\($0.value.replacingOccurrences(of: fixture.tmp.path, with: keep))" }.sorted().joined(separator: " "))
    exit(0)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

/// Sequential pushes through systemd-socket-activate; milliseconds from connect to ack.
func latencies(_ command: [String], accept: Bool, payloads: [[UInt8]],
               environment: [String: String] = environment) throws -> (ms: [Double], wallSeconds: Double) {
    let socketPath = fixture.tmp.path + "/bench.sock"
    let server = try PushSocketServer.start(socketPath: socketPath, accept: accept, command: command, environment: environment)
    defer { server.stop() }
    var out: [Double] = []
    let start = MonotonicClock.nowNs()
    for payload in payloads {
        let t0 = MonotonicClock.nowNs()
        let ack = try PushClient.send(payload, to: socketPath)
        guard ack.contains("\"ok\":true") else { throw PushClient.Failure(message: "\(command[0]): \(ack)") }
        out.append(Double(MonotonicClock.nowNs() - t0) / 1e6)
    }
    return (out, Double(MonotonicClock.nowNs() - start) / 1e9)
}

/// Peak RSS (KiB) of one direct run with the payload on stdin, from /usr/bin/time.
func peakRSS(_ command: [String], payload: [UInt8]) throws -> Int {
    let result = try ChildProcess.run("/usr/bin/time", ["-f", "RSS %M"] + command, environment: environment,
                                      stdin: String(decoding: payload, as: UTF8.self) + "\n")
    guard result.stdout.contains("\"ok\":true"),
          let line = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("RSS ") }),
          let kib = Int(line.dropFirst(4)) else {
        throw PushClient.Failure(message: "\(command[0]) run failed: \(result.stdout) \(result.stderr)")
    }
    return kib
}

func row(_ name: String, _ ms: [Double]) -> String {
    String(format: "%-14@ p50 %6.2f ms  p99 %6.2f ms  mean %6.2f ms", name as NSString,
           percentile(ms, 0.5), percentile(ms, 0.99), ms.reduce(0, +) / Double(ms.count))
}

print("worker-bench: \(pushCount) sequential pushes each, Accept=yes via systemd-socket-activate")
_ = try latencies([worker], accept: true, payloads: try sealed(10, "warm"))   // page cache, WAL
let ackerRun = try latencies([acker], accept: true, payloads: Array(repeating: Array("x".utf8), count: pushCount))
// The budget's baseline does the worker's insert: a message row into the group database
// (its schema, indexes, foreign keys, the same durability). The one-table variant is shown
// as the floor below it.
let sameInsert = environment.merging(["BASELINE_DB": fixture.group.databasePath,
                                      "BASELINE_CONVERSATION": fixture.recipient.conversationId]) { $1 }
// Interleaved in rounds, so that whatever else loads the machine falls on all three alike.
let rounds = 3
var floorRun: (ms: [Double], wallSeconds: Double) = ([], 0)
var baselineRun: (ms: [Double], wallSeconds: Double) = ([], 0)
var workerRun: (ms: [Double], wallSeconds: Double) = ([], 0)
for round in 0..<rounds {
    let count = pushCount / rounds + (round < pushCount % rounds ? 1 : 0)
    let floor = try latencies([baseline], accept: true, payloads: try sealed(count, "floor\(round)"))
    let base = try latencies([baseline], accept: true, payloads: try sealed(count, "base\(round)"), environment: sameInsert)
    let yes = try latencies([worker], accept: true, payloads: try sealed(count, "yes\(round)"))
    floorRun = (floorRun.ms + floor.ms, floorRun.wallSeconds + floor.wallSeconds)
    baselineRun = (baselineRun.ms + base.ms, baselineRun.wallSeconds + base.wallSeconds)
    workerRun = (workerRun.ms + yes.ms, workerRun.wallSeconds + yes.wallSeconds)
}
print(row("acker (C)", ackerRun.ms))
print(row("C, 1-table db", floorRun.ms))
print(row("baseline (C)", baselineRun.ms) + "   (same insert into the group database's message table)")
print(row("sotto-notify", workerRun.ms))
print(String(format: "ratio sotto-notify / baseline: p50 %.2f  p99 %.2f   (goal ≤ 1.30, issue #18)",
             percentile(workerRun.ms, 0.5) / percentile(baselineRun.ms, 0.5),
             percentile(workerRun.ms, 0.99) / percentile(baselineRun.ms, 0.99)))
print(String(format: "ratio sotto-notify / C 1-table db: p50 %.2f  p99 %.2f",
             percentile(workerRun.ms, 0.5) / percentile(floorRun.ms, 0.5),
             percentile(workerRun.ms, 0.99) / percentile(floorRun.ms, 0.99)))

let rssPayload = try fixture.sealText("rss").payload
print("peak RSS: acker \(try peakRSS([acker, "--stdin"], payload: rssPayload)) KiB, "
      + "baseline \(try peakRSS([baseline, "--stdin"], payload: rssPayload)) KiB, "
      + "sotto-notify \(try peakRSS([worker, "--payload", "-"], payload: try fixture.sealText("rss2").payload)) KiB (goal ≤ 8192, issue #18)")

let noRun = try latencies([worker, "--idle-timeout", "5"], accept: false, payloads: try sealed(pushCount, "no"))
let yesRate = Double(pushCount) / workerRun.wallSeconds
let noRate = Double(pushCount) / noRun.wallSeconds
print(row("Accept=no", noRun.ms))
print(String(format: "pushes/s sequential: Accept=yes %.0f, Accept=no %.0f (%.1fx; each push waits for its own durable commit: docs/adr/0055)", yesRate, noRate, noRate / yesRate))
