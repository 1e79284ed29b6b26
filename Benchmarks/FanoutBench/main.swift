import ControlProtocol
import Foundation
import RelayTransport
import SharedStore
import SottoClient
import SottoCrypto
import SottoWire
import TestSupport

// fanout-bench (issue #17, docs/adr/0041): one real `sotto daemon` sends to a conversation of
// MEMBERS members whose endpoints are a real nats-server relay, against a conversation of one
// member measured in the same run (the ratio is the goal: ≤ 50×, and ≤ 1 s for 1,000):
//  1. send → all pushes `relayed`: from the message's time (taken before it is signed and
//     sealed for every member) to the last push recorded relayed, on the daemon's clock; and
//     from the sendMessage call to a subscriber seeing them all relayed;
//  2. what the relay stores for one 64 KiB text to MEMBERS members (stream info of the mailbox
//     and body streams, and the store directory on disk), against 1.5 × (64 KiB + MEMBERS ×
//     one push);
//  3. the same fan-out to direct endpoints: MEMBERS members spread over 50 sockets, each
//     acking 4 ms after it read a push, as a device's worker does from spawn to durable ack
//     (docs/adr/0001); the outbox delivers to several endpoints at once (docs/adr/0053).
// The members are seeded in the sender's database (TestSupport FanoutMembers), with real keys.
// Run through Benchmarks/fanout-bench.sh (release build).
//
//   fanout-bench [members] [rounds]

let arguments = CommandLine.arguments
let memberCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000 : 1_000
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
signal(SIGPIPE, SIG_IGN)
guard NatsServer.isInstalled else { say(NatsServer.skipMessage); exit(0) }

/// Unbuffered, so a crash does not take the lines already measured with it.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func ms(_ values: [Double]) -> String {
    String(format: "p50 %.1f ms, max %.1f ms", percentile(values, 0.5), values.max() ?? 0)
}

func directorySize(_ path: String) -> UInt64 {
    guard let files = FileManager.default.enumerator(atPath: path) else { return 0 }
    var total: UInt64 = 0
    for case let file as String in files {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + file)
        if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? UInt64) ?? 0 }
    }
    return total
}

struct Sender {
    let home: DaemonHome
    let daemon: DaemonProcess
    let control: ControlClient
    let watch: DeliveryWatch
    let database: SQLiteConnection

    init(state: String) throws {
        home = try DaemonHome()
        daemon = try DaemonProcess.start(home: home)
        control = try ControlClient.connect(path: home.controlSocketPath)
        watch = try DeliveryWatch(controlSocketPath: home.controlSocketPath, databasePath: home.databasePath, state: state)
        database = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
    }

    func conversation(members: Int, endpoint: String) throws -> String {
        try conversation(members: members) { _ in endpoint }
    }

    func conversation(members: Int, endpoint: (Int) -> String) throws -> String {
        let id = try control.call(NewConversationParams()).conversationId
        try FanoutMembers.seed(conversationId: id, databasePath: home.databasePath, count: members, endpoint: endpoint)
        return id
    }

    /// (message time → last push recorded, send call → all seen, send call → returned), in ms.
    func send(_ text: String, to conversation: String, pushes: Int) throws -> (id: String, inside: Double, call: Double, returned: Double) {
        let t0 = MonotonicClock.nowNs()
        let id = try control.call(SendMessageParams(conversation: conversation, text: text)).messageId
        let returned = Double(MonotonicClock.nowNs() - t0) / 1e6
        guard let at = watch.wait(for: id, pushes: pushes) else {
            let states = try database.query("SELECT state, lastError, count(*) FROM outbox WHERE messageId = ? GROUP BY 1, 2",
                                             [.text(id)]).map { "\(try $0.string(0)) \((try? $0.string(1)) ?? "") ×\(try $0.int64(2))" }
            fatalError("\(id) not delivered to all \(pushes) within the timeout: \(states)\n\(daemon.log.suffix(2_000))")
        }
        let inside = try database.queryOne("""
            SELECT max(o.nextAttemptAt) - m.receivedAt FROM outbox o JOIN message m ON m.id = o.messageId WHERE m.id = ?
            """, [.text(id)])?.int64(0) ?? -1
        return (id, Double(inside), Double(at - t0) / 1e6, returned)
    }

    func stop() { _ = try? daemon.stop() }
}

say("== fanout-bench: one daemon → \(memberCount) members, \(rounds) rounds after 1 warm-up ==")
do {
    let tmp = try TemporaryDirectory(prefix: "fanb")
    defer { tmp.remove() }
    let server = try NatsServer.start(storeDirectory: tmp.path + "/js")
    defer { server.stop() }

    // MARK: 1. send → all relayed, 1 member vs MEMBERS
    let sender = try Sender(state: "relayed")
    defer { sender.stop() }
    let one = try sender.conversation(members: 1, endpoint: server.url)
    let many = try sender.conversation(members: memberCount, endpoint: server.url)
    var oneInside: [Double] = [], oneCall: [Double] = [], manyInside: [Double] = [], manyCall: [Double] = []
    var oneReturned: [Double] = [], manyReturned: [Double] = []
    for round in 0...rounds {
        let a = try sender.send("see you at 9, round \(round)", to: one, pushes: 1)
        let b = try sender.send("see you at 9, round \(round)", to: many, pushes: memberCount)
        guard round > 0 else { continue }
        oneInside.append(a.inside); oneCall.append(a.call); oneReturned.append(a.returned)
        manyInside.append(b.inside); manyCall.append(b.call); manyReturned.append(b.returned)
    }
    say("  relay, short text:")
    say("    to 1 member:       message time → last relayed recorded \(ms(oneInside)); send call → all seen \(ms(oneCall))")
    say("    to \(memberCount) members: message time → last relayed recorded \(ms(manyInside)); send call → all seen \(ms(manyCall))")
    say("    send call returns (sign, seal for each member, commit): 1 member \(ms(oneReturned)); \(memberCount) members \(ms(manyReturned))")
    let ratio = percentile(manyCall, 0.5) / max(percentile(oneCall, 0.5), 0.1)
    say(String(format: "    ratio %d / 1 (send call → all seen, p50): %.1fx   (goal ≤ 50x; %d members ≤ 1000 ms: %@)",
                 memberCount, ratio, memberCount, percentile(manyCall, 0.5) <= 1_000 ? "yes" : "NO"))

    // MARK: 2. bytes the relay stores for one 64 KiB text
    let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
    defer { relay.close() }
    let before = (try relay.streamUsage(), try relay.bodyStreamUsage(), directorySize(server.storeDirectory))
    let long = String(repeating: "the whole plan, step by step; ", count: 65_536 / 30 + 1)
    let longText = String(long.utf8.prefix(ContentLimits.maxTextBytes))!
    let sent = try sender.send(longText, to: many, pushes: memberCount)
    let after = (try relay.streamUsage(), try relay.bodyStreamUsage(), directorySize(server.storeDirectory))
    let pushBytes = try sender.database.queryOne("SELECT CAST(avg(length(payload)) AS INTEGER) FROM outbox WHERE messageId = ?",
                                                 [.text(sent.id)]).map { Double(try $0.int64(0)) } ?? 0
    let stored = (after.0.bytes - before.0.bytes) + (after.1.bytes - before.1.bytes)
    let onDisk = Int64(after.2) - Int64(before.2)
    let budget = 1.5 * (65_536 + Double(memberCount) * pushBytes)
    say("  relay, one 64 KiB text to \(memberCount) members (each push \(Int(pushBytes)) bytes):")
    say("    mailbox stream +\(after.0.messages - before.0.messages) msgs +\(after.0.bytes - before.0.bytes) B; "
          + "body stream +\(after.1.messages - before.1.messages) msgs +\(after.1.bytes - before.1.bytes) B")
    say(String(format: "    stored %d B (store directory +%lld B) vs 1.5 × (64 KiB + %d × push) = %.0f B: %.2f of the budget",
                 Int(stored), onDisk, memberCount, budget, Double(stored) / budget))
    // Every push is one 4,099-byte frame on the relay (docs/protocol/relay-padding.md, issue #19's sizes).
    let frameBudget = 1.5 * (65_536 + Double(memberCount) * Double(RelayPadding.frameBytes))
    say(String(format: "    vs 1.5 × (64 KiB + %d × one relay frame of %d B) = %.0f B: %.2f of the budget", memberCount,
                 RelayPadding.frameBytes, frameBudget, Double(stored) / frameBudget))
    say(String(format: "    vs a 64 KiB text inline in every push (%d × 64 KiB): %.1f%%", memberCount,
                 100 * Double(stored) / (Double(memberCount) * 65_536)))
    say(String(format: "    send call → all relayed: %.1f ms", sent.call))

    // MARK: 3. direct endpoints
    let direct = try Sender(state: "sent")
    defer { direct.stop() }
    let sinks = (0..<50).map { AckingPushSink(path: tmp.path + "/sink\($0).sock", ackDelayMs: 4) }
    let directOne = try direct.conversation(members: 1, endpoint: "unix:" + sinks[0].path)
    let directMany = try direct.conversation(members: memberCount) { "unix:" + sinks[$0 % sinks.count].path }
    var dOne: [Double] = [], dMany: [Double] = []
    for round in 0...rounds {
        let a = try direct.send("see you at 9, round \(round)", to: directOne, pushes: 1)
        let b = try direct.send("see you at 9, round \(round)", to: directMany, pushes: memberCount)
        if round > 0 { dOne.append(a.call); dMany.append(b.call) }
    }
    say("  direct unix: 50 endpoints that ack 4 ms after the push, short text:")
    say("    to 1 member \(ms(dOne)); to \(memberCount) members \(ms(dMany))")
    say(String(format: "    ratio %d / 1 (p50): %.1fx", memberCount, percentile(dMany, 0.5) / max(percentile(dOne, 0.5), 0.1)))
} catch {
    say("benchmark failed: \(error)")
    exit(1)
}
