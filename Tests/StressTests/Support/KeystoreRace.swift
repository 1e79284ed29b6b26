import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #7 part 4: one process creates and deletes identities (`sotto-keystore-probe
/// churn`) while two reader processes look them up (`… lookup`) and real workers
/// (`sotto-notify --payload -`) receive pushes for identities that are being deleted.
/// A reader may only ever see the right identity or `.missing`; a worker may only ack `ok`
/// (exit 0) or `unknown_client` (exit 65); nobody dies of a signal.
///
/// ```swift
/// let report = try KeystoreRace(profile: .short).run()
/// print(report.summaryLine)
/// ```
struct KeystoreRace {
    let profile: StressProfile
    static let liveIdentities = 8
    static let readers = 2
    static let pushThreads = 4

    struct Report: Sendable {
        var identities = 0
        var churnStatus: Int32 = -1
        var readerStatuses: [Int32] = []
        var found = 0
        var missing = 0
        var wrong = 0
        var torn = 0
        var firstTorn: String?
        var pushes = 0
        var stored = 0
        var unknownClient = 0
        var pushFailures: [String] = []
        var kills = 0
        var seconds = 0.0

        var summaryLine: String {
            "STRESS keystore: identities=\(identities) lookups=\(found + missing + wrong + torn) found=\(found) "
                + "missing=\(missing) wrong=\(wrong) torn=\(torn) pushes=\(pushes) stored=\(stored) "
                + "unknownClient=\(unknownClient) failures=\(pushFailures.count) kills=\(kills) "
                + "seconds=\(String(format: "%.1f", seconds))"
                + (firstTorn.map { " firstTorn=\"\($0)\"" } ?? "")
        }
    }

    func run() throws -> Report {
        var report = Report()
        let count = profile.keystoreIdentities
        report.identities = count
        let tmp = try TemporaryDirectory(prefix: "sotto-ksrace")
        let group = GroupDirectory(path: tmp.path + "/group")
        try group.create()
        _ = try Keystore(directory: group.keystorePath, environment: [:], createIfMissing: true)

        // Every identity has an inbox and a conversation, so a push it can open is stored.
        let sender = Identity.generate()
        let identities = (0..<count).map(StressIdentity.make)
        let conversations = identities.map { _ in Hex.encode(SecureRandom.bytes(16)) }
        let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker, create: true)
        try Migrator.migrate(conn)
        let now = WallClock.nowMs()
        try conn.immediateTransaction { () throws(InboxWriteError) in
            for (identity, conversationId) in zip(identities, conversations) {
                _ = try InboxWriter.save(inboxId: identity.inboxId, clientId: identity.clientId, now: now, on: conn)
                _ = try InboxWriter.createConversation(
                    NewConversation(id: conversationId, inboxId: identity.inboxId, name: nil, creatorInboxId: sender.inboxId,
                                    state: .active, createdAt: now, members: [
                                        MemberEntry(inboxId: sender.inboxId, publicKey: sender.publicKey.hex,
                                                    endpoint: "unix:/tmp/s.sock", clientId: sender.clientId),
                                        MemberEntry(inboxId: identity.inboxId, publicKey: identity.publicKey.hex,
                                                    endpoint: "unix:/tmp/r.sock", clientId: identity.clientId)]),
                    on: conn)
            }
        }
        let indexByClientId = Dictionary(uniqueKeysWithValues: identities.enumerated().map { ($1.clientId, $0) })

        let probe = try profile.executable("sotto-keystore-probe")
        let notify = try profile.executable("sotto-notify")
        let stopFile = tmp.path + "/stop"
        var environment = ProcessInfo.processInfo.environment
        environment["SOTTO_GROUP_DIR"] = group.path
        environment["SOTTO_RUNTIME_DIR"] = tmp.path + "/run"
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        let workerEnvironment = environment

        let started = Date()
        let readers = try (0..<Self.readers).map { _ in
            try LoggedProcess.launch(probe, ["lookup", group.keystorePath, String(count), stopFile], environment: environment)
        }
        let churner = try LoggedProcess.launch(probe, ["churn", group.keystorePath, String(count), String(Self.liveIdentities)],
                                               environment: environment)

        // Pushes for identities that exist right now, i.e. the ones about to be deleted.
        let outcomes = Locked((stored: 0, unknown: 0, failures: [String](), sent: 0))
        let pushesWanted = profile.keystorePushes
        DispatchQueue.concurrentPerform(iterations: Self.pushThreads) { _ in
            while outcomes.value.sent < pushesWanted, churner.isRunning {
                let live = (try? FileManager.default.contentsOfDirectory(atPath: group.keystorePath)) ?? []
                guard let index = live.compactMap({ name -> Int? in
                    name.hasSuffix(".identity") ? indexByClientId[String(name.dropLast(9))] : nil
                }).min() else { continue }  // the oldest live one is the next to go
                outcomes.update { $0.sent += 1 }
                let identity = identities[index]
                let topic = DBConversation.topic(for: conversations[index])
                let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversations[index],
                                                sentAtMs: WallClock.nowMs(), contentType: ContentType.text,
                                                content: Array("race".utf8), fallback: nil, signer: sender.privateKey)
                let payload = PushPayload(clientId: identity.clientId, topic: topic,
                                          envelope: Envelope.seal(signed.encode(), recipient: identity.publicKey,
                                                                  clientId: identity.clientId, topic: topic)).encode()
                do {
                    let result = try ChildProcess.run(notify, ["--payload", "-"], environment: workerEnvironment,
                                                      stdin: String(decoding: payload, as: UTF8.self) + "\n")
                    let ack = PushAck.parse(Array(result.stdout.utf8))
                    switch (result.status, ack) {
                    case (0, .ok?): outcomes.update { $0.stored += 1 }
                    case (65, .error(let error)?) where error.code == .unknownClient: outcomes.update { $0.unknown += 1 }
                    default:
                        outcomes.update { $0.failures.append("status \(result.status): \(result.stdout.prefix(160))") }
                    }
                } catch {
                    outcomes.update { $0.failures.append("\(error)") }
                }
            }
        }
        report.churnStatus = churner.waitForExit()
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        for reader in readers {
            let status = reader.waitForExit()
            report.readerStatuses.append(status)
            for line in reader.output {
                if line.hasPrefix("first-torn: "), report.firstTorn == nil { report.firstTorn = String(line.dropFirst(12)) }
                guard line.hasPrefix("found=") else { continue }
                let fields = Dictionary(uniqueKeysWithValues: line.split(separator: " ").compactMap { field -> (String, Int)? in
                    let pair = field.split(separator: "=")
                    return pair.count == 2 ? (String(pair[0]), Int(pair[1]) ?? 0) : nil
                })
                report.found += fields["found"] ?? 0
                report.missing += fields["missing"] ?? 0
                report.wrong += fields["wrong"] ?? 0
                report.torn += fields["torn"] ?? 0
            }
        }
        report.seconds = Date().timeIntervalSince(started)
        let result = outcomes.value
        report.pushes = result.sent
        report.stored = result.stored
        report.unknownClient = result.unknown
        report.pushFailures = result.failures
        report.kills = ([report.churnStatus] + report.readerStatuses).filter { $0 > 128 }.count
            + result.failures.filter { $0.hasPrefix("status 1") && ($0.dropFirst(7).prefix(3).allSatisfy(\.isNumber)) }.count
        return report
    }
}
