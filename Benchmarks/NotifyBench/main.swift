import Foundation
import Synchronization
import SharedStore
import SottoWire
import TestSupport

// notify-bench: does a desktop notification throttle storage? Pushes per second through an
// Accept=no worker, and the lifetime of one Accept=yes worker process (how long it holds
// its connection slot), with no session bus beside a bus whose notification server never
// answers (StalledNotificationBus). Then what showing one costs the worker (issue #22 item 4):
// spawn → ack and spawn → exit with a real notification server, preview full and none, and
// handed over to the daemon on notifications.sock (docs/adr/0046), each against no bus at all.
// Run through Benchmarks/notify-bench.sh (release build).
//
//   notify-bench <sotto-notify> [pushes]

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: notify-bench SOTTO_NOTIFY [PUSHES]\n".utf8))
    exit(64)
}
let worker = arguments[1]
let pushCount = arguments.count > 2 ? Int(arguments[2]) ?? 100 : 100

guard let vectors = try Vectors.load() else { fatalError("vectors not found; set SOTTO_VECTORS") }
let fixture = try WorkerFixture(vectors: vectors)
let stalledBus = try StalledNotificationBus()
let noBus = fixture.environment
let stalled = fixture.environment.merging(["DBUS_SESSION_BUS_ADDRESS": stalledBus.address]) { $1 }

/// Sequential pushes through one Accept=no worker; pushes per second.
func acceptNoRate(_ environment: [String: String], tag: String) throws -> Double {
    let socketPath = fixture.tmp.path + "/bench-\(tag).sock"
    let server = try PushSocketServer.start(socketPath: socketPath, accept: false,
                                            command: [worker, "--idle-timeout", "5"], environment: environment)
    defer { server.stop() }
    let payloads = try (0..<pushCount).map { try fixture.sealText("\(tag) \($0)").payload }
    let start = MonotonicClock.nowNs()
    for payload in payloads {
        let ack = try PushClient.send(payload, to: socketPath)
        guard ack.contains("\"ok\":true") else { throw PushClient.Failure(message: "\(tag): \(ack)") }
    }
    return Double(pushCount) / (Double(MonotonicClock.nowNs() - start) / 1e9)
}

/// Median spawn-to-exit time of `sotto-notify --payload -` (one Accept=yes instance's life).
func processLifetimeMs(_ environment: [String: String], tag: String, runs: Int = 20) throws -> Double {
    var times: [Double] = []
    for index in 0..<runs {
        let payload = try fixture.sealText("\(tag) life \(index)").payload
        let t0 = MonotonicClock.nowNs()
        let result = try ChildProcess.run(worker, ["--payload", "-"], environment: environment,
                                          stdin: String(decoding: payload, as: UTF8.self) + "\n")
        guard result.status == 0 else { throw PushClient.Failure(message: "\(tag): \(result.stderr)") }
        times.append(Double(MonotonicClock.nowNs() - t0) / 1e6)
    }
    return times.sorted()[times.count / 2]
}

print("notify-bench: \(pushCount) sequential pushes per Accept=no run")
let rateNoBus = try acceptNoRate(noBus, tag: "nobus")
let rateStalled = try acceptNoRate(stalled, tag: "stalled")
print(String(format: "Accept=no pushes/s: no session bus %.0f, stalled notification server %.0f (ratio %.2f; goal ≥ 0.8)",
             rateNoBus, rateStalled, rateStalled / rateNoBus))
let lifeNoBus = try processLifetimeMs(noBus, tag: "nobus")
let lifeStalled = try processLifetimeMs(stalled, tag: "stalled")
print(String(format: "Accept=yes process lifetime p50: no session bus %.1f ms, stalled notification server %.1f ms (ratio %.2f)",
             lifeNoBus, lifeStalled, lifeStalled / lifeNoBus))
stalledBus.stop()   // globals are not deinitialized at exit

// MARK: - What a notification costs the worker (issue #22 item 4)

/// p50 and p99 of `samples`, in ms.
func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
    let sorted = samples.sorted()
    return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
}

/// Spawn → ack through an Accept=yes push socket (one worker per push, what systemd runs), and
/// spawn → exit of `sotto-notify --payload -` (how long the process lives after its ack).
func workerTimes(_ environment: [String: String], tag: String, runs: Int)
    throws -> (ack: (p50: Double, p99: Double), life: (p50: Double, p99: Double)) {
    let socketPath = fixture.tmp.path + "/bench-\(tag).sock"
    let server = try PushSocketServer.start(socketPath: socketPath, accept: true, command: [worker], environment: environment)
    defer { server.stop() }
    var acks: [Double] = []
    for index in 0..<runs {
        let payload = try fixture.sealText("\(tag) ack \(index)").payload
        let t0 = MonotonicClock.nowNs()
        let ack = try PushClient.send(payload, to: socketPath)
        acks.append(Double(MonotonicClock.nowNs() - t0) / 1e6)
        guard ack.contains("\"ok\":true") else { throw PushClient.Failure(message: "\(tag): \(ack)") }
    }
    var lives: [Double] = []
    for index in 0..<runs {
        let payload = try fixture.sealText("\(tag) life \(index)").payload
        let t0 = MonotonicClock.nowNs()
        let result = try ChildProcess.run(worker, ["--payload", "-"], environment: environment,
                                          stdin: String(decoding: payload, as: UTF8.self) + "\n")
        lives.append(Double(MonotonicClock.nowNs() - t0) / 1e6)
        guard result.status == 0 else { throw PushClient.Failure(message: "\(tag): \(result.stderr)") }
    }
    return (percentiles(acks), percentiles(lives))
}

func setDevicePreview(_ preview: String) throws {
    let connection = try fixture.open()
    _ = try connection.run("INSERT OR REPLACE INTO device_setting (key, value) VALUES ('notificationPreview', ?)", [.text(preview)])
}

let runs = max(pushCount / 2, 20)
let notificationServer = try TestNotificationServer()
let shown = fixture.environment.merging(["DBUS_SESSION_BUS_ADDRESS": notificationServer.address]) { $1 }
// The server prints each notification; read them as they come so its pipe never fills, and
// count them: a row that showed nothing would measure nothing.
let shownCount = Mutex(0)
let reader = Thread { while (try? notificationServer.nextNotification()) != nil { shownCount.withLock { $0 += 1 } } }
reader.start()

/// Waits until the server has shown `count` notifications in all (they are posted after the ack).
func expectShown(_ count: Int, _ row: String) {
    let deadline = MonotonicClock.nowNs() + 10_000_000_000
    while shownCount.withLock({ $0 }) < count {
        guard MonotonicClock.nowNs() < deadline else { fatalError("\(row): \(shownCount.withLock { $0 }) of \(count) notifications shown") }
        usleep(10_000)
    }
}

var rows: [(String, (p50: Double, p99: Double), (p50: Double, p99: Double))] = []
let baseline = try workerTimes(noBus, tag: "baseline", runs: runs)
rows.append(("no session bus (baseline)", baseline.ack, baseline.life))
try setDevicePreview("full")
let full = try workerTimes(shown, tag: "full", runs: runs)
rows.append(("notification server, preview full", full.ack, full.life))
expectShown(2 * runs, "preview full")
try setDevicePreview("none")
let none = try workerTimes(shown, tag: "none", runs: runs)
rows.append(("notification server, preview none", none.ack, none.life))
expectShown(4 * runs, "preview none")
try setDevicePreview("full")
// The daemon's end of notifications.sock: a bound datagram socket, read as the daemon reads it
// (a full socket would send the worker back to posting itself), is what the worker sees.
let handover = UnixSocket.bind(fixture.runtimeDirectory + "/notifications.sock", type: UnixSocket.datagramType)
guard handover >= 0 else { fatalError("cannot bind notifications.sock") }
let handedOverCount = Mutex(0)
let handoverReader = Thread {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while recv(handover, &buffer, buffer.count, 0) > 0 { handedOverCount.withLock { $0 += 1 } }
}
handoverReader.start()
let handedOver = try workerTimes(shown, tag: "handover", runs: runs)
rows.append(("handed over on notifications.sock", handedOver.ack, handedOver.life))
let deadline = MonotonicClock.nowNs() + 10_000_000_000
while handedOverCount.withLock({ $0 }) < 2 * runs, MonotonicClock.nowNs() < deadline { usleep(10_000) }
guard handedOverCount.withLock({ $0 }) == 2 * runs, shownCount.withLock({ $0 }) == 4 * runs else {
    fatalError("handover: \(handedOverCount.withLock { $0 }) datagrams of \(2 * runs), and the worker posted \(shownCount.withLock { $0 } - 4 * runs) itself")
}

print("\nnotify-bench: what a notification costs the worker, \(runs) pushes per row (ms, ratio to the baseline)")
print("| | spawn → ack p50 | p99 | spawn → exit p50 | p99 |")
print("|---|---|---|---|---|")
for (name, ack, life) in rows {
    print(String(format: "| %@ | %.2f (%.2f×) | %.2f (%.2f×) | %.2f (%.2f×) | %.2f (%.2f×) |", name,
                 ack.p50, ack.p50 / baseline.ack.p50, ack.p99, ack.p99 / baseline.ack.p99,
                 life.p50, life.p50 / baseline.life.p50, life.p99, life.p99 / baseline.life.p99))
}
