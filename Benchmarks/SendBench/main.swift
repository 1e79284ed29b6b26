import ControlProtocol
import DaemonStore
import Foundation
import SharedStore
import SottoClient
import SottoCrypto
import SottoWire
import TestSupport

// send-bench (issue #17, docs/adr/0032): what a 64 KiB text by reference costs the sending
// daemon, against a short text measured in the same run, both to the same N direct members.
// One real `sotto daemon`; `sendMessage` call → every member's push acked (the outbox rows all
// `sent`, seen from a `subscribe` client's status changes), in two settings:
//  1. each member a real device home served by systemd-socket-activate --accept running the
//     real sotto-notify (what a member's device does: spawn, read, decrypt, check, commit, ack);
//  2. every member's endpoint an in-process sink that reads the push and its body and acks
//     at once: the daemon's own part (sign, seal once and per member, store, write).
// Run through Benchmarks/send-bench.sh (release build).
//
//   send-bench <sotto-notify> [members] [rounds]

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: send-bench SOTTO_NOTIFY [MEMBERS] [ROUNDS]\n".utf8))
    exit(64)
}
let worker = arguments[1]
let memberCount = arguments.count > 2 ? Int(arguments[2]) ?? 10 : 10
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 20 : 20
signal(SIGPIPE, SIG_IGN)

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func ms(_ value: Double) -> String { String(format: "%.1f ms", value) }

/// A member's device without its daemon: its identity in a keystore, a database holding the
/// conversation (the sender a member of it), and push.sock served by the real worker.
final class MemberDevice {
    let tmp: TemporaryDirectory
    let identity: Identity
    let server: PushSocketServer
    var endpoint: String { "unix:" + server.socketPath }

    init(conversation: DBConversation, sender: DBMember) throws {
        let identity = Identity.generate()
        self.identity = identity
        tmp = try TemporaryDirectory(prefix: "sb-m")
        let group = GroupDirectory(path: tmp.path + "/group")
        try group.create()
        let run = tmp.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try Keystore(directory: group.keystorePath, environment: [:], createIfMissing: true).save(identity)
        let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        let now = WallClock.nowMs()
        let members = [
            MemberEntry(inboxId: sender.inboxId, publicKey: sender.publicKey, endpoint: sender.endpoint,
                        clientId: sender.clientId, profileName: "Sender"),
            MemberEntry(inboxId: identity.inboxId, publicKey: identity.publicKey.hex, endpoint: "unix:" + run + "/push.sock",
                        clientId: identity.clientId, profileName: nil),
        ]
        try conn.immediateTransaction { () throws(InboxWriteError) in
            try InboxWriter.save(inboxId: identity.inboxId, clientId: identity.clientId, now: now, on: conn)
            try InboxWriter.createConversation(
                NewConversation(id: conversation.id, inboxId: identity.inboxId, name: nil, creatorInboxId: sender.inboxId,
                                state: .active, createdAt: now, members: members), on: conn)
        }
        server = try PushSocketServer.start(socketPath: run + "/push.sock", accept: true, command: [worker],
                                            environment: ["SOTTO_KEY_STORE": "file", "SOTTO_GROUP_DIR": group.path, "SOTTO_RUNTIME_DIR": run])
    }
}

/// One daemon, one conversation with `endpoints.count` members; ms from the send call to all sent.
func measure(label: String, endpoints: (DBConversation, DBMember) throws -> [(Identity, String)]) throws -> (short: [Double], long: [Double]) {
    let home = try DaemonHome()
    let daemon = try DaemonProcess.start(home: home)
    defer { _ = try? daemon.stop() }
    let control = try ControlClient.connect(path: home.controlSocketPath)
    let conversationId = try control.call(NewConversationParams()).conversationId
    let (conversation, sender) = try {
        let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
        guard let conversation = try ConversationRepository.find(id: conversationId, on: conn),
              let sender = try MemberRepository.members(of: conversationId, on: conn).first else { fatalError("no conversation") }
        return (conversation, sender)
    }()
    let members = try endpoints(conversation, sender)
    for (index, (identity, endpoint)) in members.enumerated() {
        _ = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath, name: "m\(index)",
                                  identity: identity, endpoint: endpoint)
    }
    let sent = try DeliveryWatch(controlSocketPath: home.controlSocketPath, databasePath: home.databasePath, state: "sent")
    let long = String(repeating: "the whole plan, step by step; ", count: 65_536 / 30 + 1)
    let longText = String(long.utf8.prefix(ContentLimits.maxTextBytes))!

    func once(_ text: String) throws -> Double {
        let t0 = MonotonicClock.nowNs()
        let id = try control.call(SendMessageParams(conversation: conversationId, text: text)).messageId
        guard let at = sent.wait(for: id, pushes: members.count, timeoutSeconds: 60) else { fatalError("\(label): \(id) not sent to all within 60 s\n\(daemon.log)") }
        return Double(at - t0) / 1e6
    }
    var short: [Double] = []
    var longs: [Double] = []
    for round in 0..<(rounds + 3) {
        let a = try once("see you at 9, round \(round)")
        let b = try once(longText)
        if round >= 3 { short.append(a); longs.append(b) }   // 3 warm-up rounds
    }
    return (short, longs)
}

func report(_ label: String, _ result: (short: [Double], long: [Double])) {
    let (s50, l50) = (percentile(result.short, 0.5), percentile(result.long, 0.5))
    let (s90, l90) = (percentile(result.short, 0.9), percentile(result.long, 0.9))
    print("  \(label)")
    print("    short text:               p50 \(ms(s50)), p90 \(ms(s90))")
    print("    64 KiB text by reference: p50 \(ms(l50)), p90 \(ms(l90))")
    print(String(format: "    ratio 64 KiB / short:     p50 %.2fx, p90 %.2fx", l50 / s50, l90 / s90))
}

print("== send-bench: sendMessage → all \(memberCount) members acked (one daemon, \(rounds) rounds after 3 warm-up) ==")
do {
    var devices: [MemberDevice] = []
    let real = try measure(label: "real workers") { conversation, sender in
        devices = try (0..<memberCount).map { _ in try MemberDevice(conversation: conversation, sender: sender) }
        return devices.map { ($0.identity, $0.endpoint) }
    }
    report("to \(memberCount) devices, each push a real sotto-notify (spawn, decrypt, check the body, commit, ack):", real)
    for device in devices { device.server.stop() }

    let sinkDirectory = try TemporaryDirectory(prefix: "sb-s")
    let sink = AckingPushSink(path: sinkDirectory.path + "/sink.sock")
    let alone = try measure(label: "sink") { _, _ in
        (0..<memberCount).map { _ in (Identity.generate(), "unix:" + sink.path) }
    }
    report("to \(memberCount) endpoints that ack at once (the daemon's own part: seal, store, write):", alone)
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
