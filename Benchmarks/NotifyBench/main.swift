import Foundation
import SottoWire
import TestSupport

// notify-bench: does a desktop notification throttle storage? Pushes per second through an
// Accept=no worker, and the lifetime of one Accept=yes worker process (how long it holds
// its connection slot), with no session bus beside a bus whose notification server never
// answers (StalledNotificationBus). Run through Benchmarks/notify-bench.sh (release build).
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
    let start = WallClock.monotonicNs()
    for payload in payloads {
        let ack = try PushClient.send(payload, to: socketPath)
        guard ack.contains("\"ok\":true") else { throw PushClient.Failure(message: "\(tag): \(ack)") }
    }
    return Double(pushCount) / (Double(WallClock.monotonicNs() - start) / 1e9)
}

/// Median spawn-to-exit time of `sotto-notify --payload -` (one Accept=yes instance's life).
func processLifetimeMs(_ environment: [String: String], tag: String, runs: Int = 20) throws -> Double {
    var times: [Double] = []
    for index in 0..<runs {
        let payload = try fixture.sealText("\(tag) life \(index)").payload
        let t0 = WallClock.monotonicNs()
        let result = try ChildProcess.run(worker, ["--payload", "-"], environment: environment,
                                          stdin: String(decoding: payload, as: UTF8.self) + "\n")
        guard result.status == 0 else { throw PushClient.Failure(message: "\(tag): \(result.stderr)") }
        times.append(Double(WallClock.monotonicNs() - t0) / 1e6)
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
