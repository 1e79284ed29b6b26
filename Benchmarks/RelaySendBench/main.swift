import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import TestSupport
import SottoWire

// The sending half of the relay (docs/adr/0028), measured with the real binaries:
//  1. the JetStream publish round trip (publish → stream ack), p50/p99, one connection;
//  2. `sotto send` started → the outbox row `relayed` (alice and bob on one nats-server,
//     each with a daemon and sotto-relayd), p50/p99 over SENDS sends;
//  3. the same with direct `unix:` endpoints (no relay) → the row `sent`, in the same run;
// and prints the ratio relay/direct. Usage: RelaySendBench [SENDS]   (default 200)

let sends = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200 : 200
guard NatsServer.isInstalled else { print(NatsServer.skipMessage); exit(0) }

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func line(_ what: String, _ values: [Double]) -> String {
    String(format: "%@: p50 %.2f ms, p99 %.2f ms (n=%d)", what, percentile(values, 0.5), percentile(values, 0.99), values.count)
}

func nowMs() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e6 }

struct BenchFailure: Error { let text: String }

// MARK: - Two devices and a conversation

func conversation(_ alice: Device, _ bob: Device) throws -> String {
    guard let id = try alice.json(["new", "--name", "Bench"])["conversationId"] as? String,
          let code = try alice.json(["invite", id, "--expires", "1h"])["code"] as? String else { throw BenchFailure(text: "new/invite") }
    _ = try bob.json(["join", code, "--profile-name", "bob"])
    try bob.waitUntil("bob active", timeoutMs: 60_000) { try bob.conversation(id)?["state"] as? String == "active" }
    try alice.waitUntil("alice has 2 members", timeoutMs: 60_000) { try alice.conversation(id)?["members"] as? Int == 2 }
    return id
}

/// Sends `sends` messages one by one; for each, the time from starting `sotto send` until the
/// row reaches `state` (`reached`), and until the CLI returned (`returned`: the CLI process
/// and the send RPC, the part both paths share; the outbox often finishes before the CLI exits).
func sendToState(_ alice: Device, _ conversation: String, state: String) throws -> (reached: [Double], returned: [Double]) {
    let conn = try SQLiteConnection.open(path: alice.group.databasePath, profile: .worker)
    var reached: [Double] = []
    var returned: [Double] = []
    for index in 0..<sends {
        let start = nowMs()
        guard let id = try alice.json(["send", conversation, "bench \(index)"])["messageId"] as? String else {
            throw BenchFailure(text: "send")
        }
        returned.append(nowMs() - start)
        while try conn.queryOne("SELECT state FROM outbox WHERE messageId = ?", [.text(id)])?.string(0) != state {
            if nowMs() - start > 30_000 { throw BenchFailure(text: "message \(index) never \(state)") }
            usleep(200)
        }
        reached.append(nowMs() - start)
    }
    return (reached, returned)
}

/// Inside the daemon, from the rows: the message's commit (`message.receivedAt`) to the push's
/// outcome being recorded (`outbox.nextAttemptAt`, set to the time of the recording), in whole ms.
func commitToRecorded(_ alice: Device, _ conversation: String) throws -> [Double] {
    try alice.query("""
        SELECT o.nextAttemptAt - m.receivedAt FROM outbox o JOIN message m ON m.id = o.messageId
        WHERE m.conversationId = ? AND m.contentType = ?
        """, [.text(conversation), .text(ContentType.text)]).map { Double(try $0.int64(0)) }
}

func relayd(_ device: Device, _ url: String) throws -> LoggedProcess {
    let process = try LoggedProcess.launch(try builtExecutable("sotto-relayd"), [],
                                           environment: device.environment.merging(["SOTTO_RELAY": url, "PATH": "/usr/bin:/bin"]) { $1 })
    guard process.waitForLine(containing: "relay connected:", timeout: 30) else { throw BenchFailure(text: "relayd") }
    return process
}

let tmp = try TemporaryDirectory(prefix: "rsbench")
defer { tmp.remove() }
let server = try NatsServer.start(storeDirectory: tmp.path + "/js")
defer { server.stop() }

// MARK: 1. Connect, and the publish round trip
var connects: [Double] = []
for _ in 0..<20 {
    let start = nowMs()
    let connection = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
    try connection.ensureStream()
    connects.append(nowMs() - start)
    connection.close()
}
print(line("connect + ensure the stream (what a connection per relay URL saves per push)", connects))
let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
try relay.ensureStream()
let box = try Mailbox(clientId: "3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10")
let payload = [UInt8](repeating: 0x61, count: 1_200)  // about a text push's size
var publishes: [Double] = []
for index in 0..<1_000 {
    let start = nowMs()
    _ = try relay.publish(payload, to: box, messageId: "bench-\(index)")
    publishes.append(nowMs() - start)
}
try relay.purge(box)
relay.close()
print(line("publish round trip (1,200-byte push, stream ack)", publishes))

// MARK: 2. send → relayed
var relayed: [Double] = []
var relayedInside: [Double] = []
do {
    let alice = try Device.start("alice", in: tmp.path + "/relay", environment: ["SOTTO_RELAY": server.url])
    let bob = try Device.start("bob", in: tmp.path + "/relay", environment: ["SOTTO_RELAY": server.url])
    let relayds = [try relayd(alice, server.url), try relayd(bob, server.url)]
    defer {
        for process in relayds { process.signal(SIGTERM); _ = process.waitForExit() }
        alice.stop(); bob.stop()
    }
    let id = try conversation(alice, bob)
    let measured = try sendToState(alice, id, state: "relayed")
    relayed = measured.reached
    print(line("`sotto send` returns (relay)", measured.returned))
    print(line("`sotto send` started → row relayed", relayed))
    relayedInside = try commitToRecorded(alice, id)
    print(line("commit → relayed recorded (daemon clock, 1 ms steps)", relayedInside))
}

// MARK: 3. send → sent, direct unix: endpoints
do {
    let alice = try Device.start("alice", in: tmp.path + "/direct")
    let bob = try Device.start("bob", in: tmp.path + "/direct")
    defer { alice.stop(); bob.stop() }
    let id = try conversation(alice, bob)
    let measured = try sendToState(alice, id, state: "sent")
    let sent = measured.reached
    print(line("`sotto send` returns (direct)", measured.returned))
    print(line("`sotto send` started → row sent (direct unix:, the worker's ack)", sent))
    let sentInside = try commitToRecorded(alice, id)
    print(line("commit → sent recorded (daemon clock, 1 ms steps)", sentInside))
    print(String(format: "ratio relay/direct p50, commit → recorded: %.2f",
                 percentile(relayedInside, 0.5) / max(percentile(sentInside, 0.5), 0.5)))
    print(String(format: "ratio relay/direct p50, send started → recorded: %.2f", percentile(relayed, 0.5) / percentile(sent, 0.5)))
}
