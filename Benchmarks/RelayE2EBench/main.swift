import ControlProtocol
import Foundation
import SottoClient
import SottoWire
import TestSupport

// Relay end to end (issue #12): the time from alice's `send` returning to bob's `subscribe`
// client (what `sotto watch` reads) seeing the message, p50/p99 over N sends, through a relay
// (a real `nats-server -js` on loopback; both devices with SOTTO_RELAY and a `sotto-relayd`)
// beside the direct `unix:` path (no relay: alice's outbox connects to bob's push.sock), in
// the same run. Each path gets two fresh devices (real daemons, push sockets served by
// systemd-socket-activate running the real sotto-notify, the real CLI for the set-up); both
// pairs run at once and their sends alternate. Each send waits until bob's subscriber saw it.
// Build release and run through Benchmarks/relay-e2e-bench.sh.
// Usage: RelayE2EBench [SENDS]   (default 200, after 10 unmeasured warm-up sends)

// MARK: - Figures

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

enum Figures {
    static func summary(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return String(format: "p50 %7.3f ms, p99 %7.3f ms, max %7.3f ms (n=%d)",
                      percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.last ?? 0, sorted.count)
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}

// MARK: - One path

/// Two fresh devices in a conversation, alice sending to bob either through a relay or
/// straight to bob's push socket. `close` stops every process and removes the directory.
final class BenchPath {
    let name: String
    private let tmp: TemporaryDirectory
    private let server: NatsServer?
    private var devices: [Device] = []
    private var relayds: [LoggedProcess] = []
    private var conversationId = ""
    private var subscriber: MessageArrivals?
    private var sender: ControlClient?
    private(set) var latencies: [Double] = []
    private(set) var sendCalls: [Double] = []

    init(relay: Bool) throws {
        name = relay ? "relay" : "direct"
        tmp = try TemporaryDirectory(prefix: "sotto-e2e")
        server = relay ? try NatsServer.start(storeDirectory: tmp.path + "/relay") : nil
        do {
            try start()
        } catch {
            close()
            throw error
        }
    }

    private func start() throws {
        let environment = server.map { ["SOTTO_RELAY": $0.url] } ?? [:]
        let alice = try Device.start("alice", in: tmp.path, environment: environment)
        devices.append(alice)
        let bob = try Device.start("bob", in: tmp.path, environment: environment)
        devices.append(bob)
        if server != nil {
            for device in devices {
                let relayd = try LoggedProcess.launch(try builtExecutable("sotto-relayd"), [],
                                                      environment: device.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
                relayds.append(relayd)
                guard relayd.waitForLine(containing: "relay connected:", timeout: 30) else {
                    throw BenchFailure(description: "\(device.name)'s sotto-relayd did not connect to the relay: \(relayd.output.suffix(5))")
                }
            }
        }
        // The conversation, set up with the real CLI as a person would.
        guard let id = try alice.json(["new", "--name", "Bench"])["conversationId"] as? String,
              let code = try alice.json(["invite", id])["code"] as? String else {
            throw BenchFailure(description: "alice could not create the conversation or its invite")
        }
        conversationId = id
        _ = try bob.json(["join", code, "--profile-name", "Bob"])
        try bob.waitUntil("bob's conversation is active", timeoutMs: 30_000) {
            try bob.conversation(id)?["state"] as? String == "active"
        }
        // Keyed by text: every send's text is unique and the change carries it.
        subscriber = try MessageArrivals(controlSocketPath: bob.runtime.controlSocketPath, conversationId: id) { $0.text }
        sender = try ControlClient.connect(path: alice.runtime.controlSocketPath)
    }

    /// One send, timed from the call's return to bob's subscriber seeing it; kept unless `warmUp`.
    func send(_ index: Int, warmUp: Bool) throws {
        guard let sender, let subscriber else { throw BenchFailure(description: "\(name): not started") }
        let text = "e2e \(name) \(index)"
        let called = MonotonicClock.nowNs()
        _ = try sender.call(SendMessageParams(conversation: conversationId, text: text))
        let returned = MonotonicClock.nowNs()
        guard let arrived = subscriber.arrival(of: text, timeoutSeconds: 30) else {
            throw BenchFailure(description: "\(name): bob's subscriber never saw \"\(text)\"; alice's log: \(devices[0].daemonLog.suffix(800))")
        }
        guard !warmUp else { return }
        latencies.append(Double(Int64(arrived) - Int64(returned)) / 1e6)
        sendCalls.append(Double(returned - called) / 1e6)
    }

    func close() {
        for relayd in relayds {
            relayd.signal(SIGTERM)
            _ = relayd.waitForExit()
        }
        relayds = []
        for device in devices { device.stop() }
        devices = []
        server?.stop()
        tmp.remove()
    }
}

// MARK: - Main

let sends = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200 : 200
guard NatsServer.isInstalled else { print(NatsServer.skipMessage); exit(0) }
print("== relay end to end: alice's send returns → bob's subscriber sees it, \(sends) sequential sends per path ==")
// Both paths run side by side and their sends alternate, so a change in the machine's load
// during the run falls on both alike.
do {
    let direct = try BenchPath(relay: false)
    defer { direct.close() }
    let relayed = try BenchPath(relay: true)
    defer { relayed.close() }
    let warmUp = 10
    for index in 0..<(warmUp + sends) {
        try direct.send(index, warmUp: index < warmUp)
        try relayed.send(index, warmUp: index < warmUp)
    }
    print("RELAY-E2E direct unix:   \(Figures.summary(direct.latencies))")
    print("RELAY-E2E through relay: \(Figures.summary(relayed.latencies))")
    let ratio = { (p: Double) in percentile(relayed.latencies.sorted(), p) / percentile(direct.latencies.sorted(), p) }
    print(String(format: "RELAY-E2E relay/direct: p50 %.2f, p99 %.2f   (issue #12's goal for the relay: adds ≤ 20%%, ratio ≤ 1.20)",
                 ratio(0.5), ratio(0.99)))
    print("  for scale, the send call itself (sign, seal, commit, return): direct \(Figures.summary(direct.sendCalls))")
    print("                                                               relay  \(Figures.summary(relayed.sendCalls))")
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
