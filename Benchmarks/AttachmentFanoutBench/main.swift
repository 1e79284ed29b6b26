import ControlProtocol
import Foundation
import RelayTransport
import SharedStore
import SottoClient
import SottoCrypto
import SottoWire
import TestSupport

// attachment-fanout-bench (issue #35, docs/adr/0076): what a relay takes in for one file sent
// to a conversation of MEMBERS members whose endpoints are that relay, read from the relay's
// own side: nats-server's monitoring `/varz` `in_bytes` (every byte clients published to it)
// before `sotto send ID --file PATH` and after the daemon recorded every push relayed.
// Baseline, in the same run: the bound 1.05 × (the stored file's padded length + MEMBERS ×
// one push as the relay stored it: the mailbox stream's bytes per push added by this send).
// The same file to a conversation of one member, first, shows what the file alone costs.
// One real release `sotto daemon`; the members are seeded in its database (TestSupport
// FanoutMembers, real keys), nobody reads their mailboxes, so every push stays stored.
// Run through Benchmarks/attachment-fanout-bench.sh (release build).
//
//   attachment-fanout-bench [members] [mib]

let arguments = CommandLine.arguments
let memberCount = arguments.count > 1 ? Int(arguments[1]) ?? 1_000 : 1_000
let mib = arguments.count > 2 ? Int(arguments[2]) ?? 100 : 100
signal(SIGPIPE, SIG_IGN)
guard NatsServer.isInstalled else { say(NatsServer.skipMessage); exit(0) }

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Unbuffered, so a crash does not take the lines already measured with it.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func inBytes(_ monitor: NatsMonitor) throws -> Int64 {
    guard let value = try monitor.json("/varz")["in_bytes"] as? NSNumber else {
        throw BenchFailure("/varz has no in_bytes")
    }
    return value.int64Value
}

/// One send of the file, measured: the relay's intake, its streams' growth, the times.
struct Measured {
    let members: Int
    let intake: Int64
    let storedLength: Int
    let pieces: (messages: UInt64, bytes: UInt64)
    let pushes: (messages: UInt64, bytes: UInt64)
    let sendMs: Double
    let relayedMs: Double
    var pushBytes: Double { Double(pushes.bytes) / Double(max(1, pushes.messages)) }
}

say("== attachment-fanout-bench: one \(mib) MiB file → \(memberCount) members through a real nats-server ==")
do {
    let tmp = try TemporaryDirectory(prefix: "attfb")
    defer { tmp.remove() }
    let server = try NatsServer.prepare(storeDirectory: tmp.path + "/js", monitoring: true)
    try server.restart()
    defer { server.stop() }
    guard let port = server.monitorPort else { throw BenchFailure("no monitoring port") }
    let monitor = NatsMonitor(port: port)

    let home = try DaemonHome()
    let daemon = try DaemonProcess.start(home: home)
    defer { _ = try? daemon.stop() }
    let control = try ControlClient.connect(path: home.controlSocketPath)
    let watch = try DeliveryWatch(controlSocketPath: home.controlSocketPath, databasePath: home.databasePath, state: "relayed")
    let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
    defer { relay.close() }
    let sotto = try builtExecutable("sotto")

    let path = tmp.path + "/file.bin"
    try Data(SecureRandom.bytes(mib * 1_048_576)).write(to: URL(fileURLWithPath: path))

    func send(to members: Int) throws -> Measured {
        let conversation = try control.call(NewConversationParams()).conversationId
        try FanoutMembers.seed(conversationId: conversation, databasePath: home.databasePath, count: members, endpoint: server.url)
        try relay.ensureStream()
        try relay.ensureAttachmentStream()
        let mailboxBefore = try relay.streamUsage(), piecesBefore = try relay.attachmentStreamUsage()
        let before = try inBytes(monitor)
        let t0 = MonotonicClock.nowNs()
        let sent = try ChildProcess.run(sotto, ["send", conversation, "--file", path, "--json"], environment: home.environment)
        let sendMs = Double(MonotonicClock.nowNs() - t0) / 1e6
        guard sent.status == 0, let object = try? JSONSerialization.jsonObject(with: Data(sent.stdout.utf8)) as? [String: Any],
              let id = object["messageId"] as? String else {
            throw BenchFailure("sotto send --file exited \(sent.status): \(sent.stderr)\n\(daemon.log.suffix(2_000))")
        }
        guard let at = watch.wait(for: id, pushes: members, timeoutSeconds: 600) else {
            throw BenchFailure("\(id) not relayed to all \(members)\n\(daemon.log.suffix(2_000))")
        }
        let after = try inBytes(monitor)
        let mailboxAfter = try relay.streamUsage(), piecesAfter = try relay.attachmentStreamUsage()
        // What the reference says is stored (`sotto send --json`), the padded length of attachments.md §4.
        let storedLength = (object["storedLength"] as? NSNumber)?.intValue ?? AttachmentLayout.storedLength(mib * 1_048_576)
        return Measured(members: members, intake: after - before, storedLength: storedLength,
                        pieces: (piecesAfter.messages - piecesBefore.messages, piecesAfter.bytes - piecesBefore.bytes),
                        pushes: (mailboxAfter.messages - mailboxBefore.messages, mailboxAfter.bytes - mailboxBefore.bytes),
                        sendMs: sendMs, relayedMs: Double(at - t0) / 1e6)
    }

    func report(_ m: Measured) {
        let bound = 1.05 * (Double(m.storedLength) + Double(m.members) * m.pushBytes)
        say("  to \(m.members) member\(m.members == 1 ? "" : "s"): send --file returned in \(Int(m.sendMs)) ms, every push relayed at \(Int(m.relayedMs)) ms")
        say("    relay in_bytes +\(m.intake); attachment stream +\(m.pieces.messages) messages (pieces and need) +\(m.pieces.bytes) B "
              + "(stored file \(m.storedLength) B); mailbox stream +\(m.pushes.messages) pushes +\(m.pushes.bytes) B "
              + String(format: "(%.0f B each; a frame is %d B)", m.pushBytes, RelayPadding.frameBytes))
        say(String(format: "    in_bytes / (1.05 × (%d + %d × %.0f) = %.0f B): %.3f   (goal ≤ 1); / the stored file alone: %.3f×",
                   m.storedLength, m.members, m.pushBytes, bound, Double(m.intake) / bound, Double(m.intake) / Double(m.storedLength)))
    }

    let one = try send(to: 1)
    report(one)
    let many = try send(to: memberCount)
    report(many)
    say(String(format: "  %d members vs 1, same file: in_bytes %.3f×, attachment stream bytes %.3f×; the %d members' extra in_bytes per extra push: %.0f B",
               memberCount, Double(many.intake) / Double(one.intake), Double(many.pieces.bytes) / Double(max(1, one.pieces.bytes)),
               memberCount, Double(many.intake - one.intake) / Double(max(1, memberCount - 1))))
    let bound = 1.05 * (Double(many.storedLength) + Double(memberCount) * many.pushBytes)
    say(String(format: "RESULT relay bytes for one %d MiB file to %d members: %lld B = %.3f of the bound 1.05 × (stored %d B + %d pushes of %.0f B): %@",
               mib, memberCount, many.intake, Double(many.intake) / bound, many.storedLength, memberCount, many.pushBytes,
               Double(many.intake) <= bound ? "within" : "OVER"))
} catch {
    say("benchmark failed: \(error)")
    exit(1)
}
